import { Command, Option } from '@commander-js/extra-typings';
import { parseWholeNumber } from '../arguments.js';
import { jsonOption, printJson, withClient } from '../client-command.js';
import type { AgentScheduleSummary } from '../../client/schedules.js';
import type { ConversationSummary } from '../../client/types.js';
import { formatCost } from '../../shared/dollars.js';
import { errorMessage } from '../../shared/errors.js';
import { printTable } from '../table.js';
import { CONVERSATION_PHASES } from '../../workflows/definitions.js';
import { printSchedules } from './schedule.js';

export function listCommand() {
  return new Command('list')
    .description(
      'List conversations, newest first (one line each: its latest run), filtered by state; then, without a filter, ' +
        'the schedules that send messages into them (`schedule list --json` has them as JSON).',
    )
    .addOption(new Option('--status <status>', 'only conversations in this state').choices(CONVERSATION_PHASES))
    .addOption(new Option('--tenant <id>', "only this tenant's conversations (docs/tenants.md)"))
    .addOption(new Option('--query <query>', "more visibility-query conditions, e.g. 'DurableAgentTurns > 3'"))
    .addOption(new Option('--limit <count>', 'at most this many').default(50).argParser(parseWholeNumber))
    .addOption(jsonOption())
    .action(async (options) => {
      const filtered = options.status !== undefined || options.tenant !== undefined || options.query !== undefined;
      const { conversations, schedules } = await withClient(async (client) => ({
        conversations: await client.list({
          ...(options.status ? { status: options.status } : {}),
          ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
          ...(options.query ? { query: options.query } : {}),
          limit: options.limit,
        }),
        // Conversations are what `list` is for: schedules that cannot be listed are a note, not a failure.
        schedules:
          options.json || filtered
            ? []
            : await client.schedules.list().catch((error: unknown) => `could not be listed: ${errorMessage(error)}`),
      }));
      if (options.json) return printJson(conversations);
      if (conversations.length === 0) console.log('No conversations.');
      else printConversations(conversations);
      printScheduleSection(schedules);
    });
}

function printConversations(conversations: readonly ConversationSummary[]): void {
  // The tenant's column only where conversations have tenants, so lists without any read as before.
  const tenants = conversations.some((entry) => entry.tenant !== undefined);
  const rows = conversations.map((entry) => [
    entry.conversationId,
    ...(tenants ? [entry.tenant ?? '-'] : []),
    entry.status,
    String(entry.turns),
    formatCost(entry.cost),
    entry.open ? 'open' : `closed (${entry.executionStatus.toLowerCase()})`,
    entry.startTime.toISOString(),
  ]);
  printTable(['CONVERSATION', ...(tenants ? ['TENANT'] : []), 'STATUS', 'TURNS', 'COST', 'RUN', 'STARTED'], rows);
}

function printScheduleSection(schedules: readonly AgentScheduleSummary[] | string): void {
  if (typeof schedules === 'string') return console.log(`\nSchedules ${schedules}`);
  if (schedules.length === 0) return;
  console.log(`\nSchedules (${schedules.length}):`);
  printSchedules(schedules);
}
