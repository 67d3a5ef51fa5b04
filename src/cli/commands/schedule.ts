import { Command, Option } from '@commander-js/extra-typings';
import type { AgentScheduleSummary } from '../../client/schedules.js';
import { jsonOption, printJson, requiredConversationOption, withClient } from '../client-command.js';
import { printTable } from '../table.js';

/**
 * `durable-agent schedule …`: turns on a schedule. Each firing of a Temporal Schedule sends MESSAGE into the
 * conversation (creating or reopening it); docs/cli.md, "Schedules".
 */
export function scheduleCommand() {
  const command = new Command('schedule').description(
    'Send a message into a conversation on a schedule (Temporal Schedules): create, list, pause, unpause, trigger, ' +
      'delete.',
  );
  command.addCommand(createCommand());
  command.addCommand(
    new Command('list')
      .description('List the schedules: conversation, when they fire, paused or not, the next and latest firings.')
      .addOption(jsonOption())
      .action(async (options) => {
        const schedules = await withClient((client) => client.schedules.list());
        if (options.json) return printJson(schedules);
        if (schedules.length === 0) return console.log('No schedules.');
        printSchedules(schedules);
      }),
  );
  const simple = [
    ['pause', 'Stop firing until `schedule unpause`.', 'paused'],
    ['unpause', 'Fire again on its spec.', 'unpaused'],
    ['trigger', 'Fire once now, whatever its spec (paused or not), under its overlap setting.', 'triggered'],
    ['delete', 'Delete the schedule: no more firings (one already started still delivers its message).', 'deleted'],
  ] as const;
  for (const [name, description, done] of simple) {
    command.addCommand(
      new Command(name)
        .description(`${description} An unknown id exits 3.`)
        .argument('<id>', 'the schedule id')
        .action(async (id) => {
          await withClient((client) => client.schedules[name](id));
          console.log(`Schedule ${id} ${done}.`);
        }),
    );
  }
  for (const sub of command.commands) sub.exitOverride();
  return command;
}

function createCommand() {
  return new Command('create')
    .description(
      'Create a schedule that sends MESSAGE into the conversation at every firing (the first creates the ' +
        'conversation when missing; a closed idle one reopens). Bad intervals or cron expressions exit 2; an ended ' +
        'conversation exits 4.',
    )
    .argument('<id>', 'the schedule id (letters, digits, ".", "_", "-")')
    .argument('<message>', 'the message each firing sends')
    .addOption(requiredConversationOption())
    .addOption(new Option('--every <duration>', 'fire every DURATION: 30s, 10m, 2h, 1d').conflicts('cron'))
    .addOption(new Option('--cron <expression>', 'fire on a cron expression (UTC), e.g. "0 9 * * 1-5"'))
    .addOption(
      new Option('--overlap <policy>', 'while a turn runs: skip drops the firing, queue queues its message')
        .choices(['skip', 'queue'] as const)
        .default('skip' as const),
    )
    .addOption(
      new Option(
        '--tenant <id>',
        "the conversation's tenant: the firings' fair share, and the tenant of a conversation the first firing " +
          "creates (default: the conversation's own, docs/tenants.md)",
      ),
    )
    .addOption(jsonOption())
    .action(async (id, message, options) => {
      const created = await withClient((client) =>
        client.schedules.create(id, {
          conversationId: options.conversation,
          message,
          overlap: options.overlap,
          ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
          ...(options.every !== undefined ? { every: options.every } : {}),
          ...(options.cron !== undefined ? { cron: options.cron } : {}),
        }),
      );
      if (options.json) return printJson(created);
      const next = created.nextFirings[0];
      console.log(
        `Created schedule ${id}: ${when(created)} into conversation ${created.conversationId} ` +
          `(overlap ${created.overlap}${created.tenant === undefined ? '' : `, tenant ${created.tenant}`})${next ? `; first firing at ${next.toISOString()}` : ''}.`,
      );
    });
}

/** When a schedule fires, in words. */
function when(schedule: AgentScheduleSummary): string {
  return schedule.every !== undefined ? `every ${schedule.every}` : `cron "${schedule.cron ?? '?'}"`;
}

/** The schedules as a table (also under `durable-agent list`). */
export function printSchedules(schedules: readonly AgentScheduleSummary[]): void {
  printTable(
    ['SCHEDULE', 'CONVERSATION', 'TENANT', 'WHEN', 'OVERLAP', 'STATE', 'NEXT', 'LAST'],
    schedules.map((schedule) => [
      schedule.scheduleId,
      schedule.conversationId,
      schedule.tenant ?? '-',
      when(schedule),
      schedule.overlap,
      schedule.paused ? `paused${schedule.note ? `: ${schedule.note}` : ''}` : 'active',
      schedule.nextFirings[0]?.toISOString() ?? '-',
      schedule.recentFirings.at(-1)?.scheduledAt.toISOString() ?? '-',
    ]),
  );
}
