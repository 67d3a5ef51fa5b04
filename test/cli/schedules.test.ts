import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentScheduleSummary, DurableAgentClient, ScheduledFiring } from '../../src/client/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { poll, ScriptBook } from '../client/helpers.js';
import { killAll } from './helpers.js';
import { type CliAgent, startCliAgent } from './cli-agent.js';

/**
 * Turns on a schedule, end to end: the CLI creates Temporal Schedules on a dev server, the server fires them, each
 * firing's workflow runs on a real worker and sends its message into the conversation, and the scripted model answers.
 */

let bed: CliAgent | undefined;
let client: DurableAgentClient;
const book = new ScriptBook('schedules');
const cli = (...args: string[]) => bed!.cli(...args);
let counter = 0;
const scheduleId = (name: string) => `${name}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  bed = await startCliAgent({ script: book.script, crm: { requireApproval: 'writes' } });
  client = bed.client;
}, 120_000);

afterEach(killAll);

afterAll(async () => {
  for (const schedule of (await client?.schedules.list().catch(() => [])) ?? []) {
    await client.schedules.delete(schedule.scheduleId).catch(() => undefined);
  }
  await bed?.close();
});

/** The result of the schedule's latest firing workflow, once there is one. */
async function latestFiring(id: string): Promise<ScheduledFiring> {
  const described = await poll(
    () => client.schedules.describe(id),
    (schedule) => schedule.recentFirings.length > 0,
  );
  const { workflowId } = described.recentFirings.at(-1)!;
  return (await client.client.workflow.getHandle(workflowId).result()) as ScheduledFiring;
}

const userMessages = async (conversationId: string) =>
  (await client.fullTranscript(conversationId)).filter((message) => message.role === 'user');

describe('durable-agent schedule', () => {
  it('schedule: a schedule firing every 10 s answers at least twice in 35 s and stops after delete', async () => {
    const conversationId = book.conversation(
      'heartbeat',
      Array.from({ length: 10 }, (_, index) => ({ content: `Checked in (${index + 1}).` })),
    );
    const id = scheduleId('heartbeat');
    const created = await cli(
      'schedule',
      'create',
      id,
      '--conversation',
      conversationId,
      '--every',
      '10s',
      'Check in.',
    );
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(`Created schedule ${id}: every 10s into conversation ${conversationId}`);

    // Listed, in `schedule list --json` and in `list`, while it runs.
    const listed = JSON.parse((await cli('schedule', 'list', '--json')).stdout) as AgentScheduleSummary[];
    expect(listed).toContainEqual(
      expect.objectContaining({ scheduleId: id, conversationId, every: '10s', overlap: 'skip', paused: false }),
    );
    await sleep(35_000);
    const answers = (await client.fullTranscript(conversationId)).filter(
      (message) => message.role === 'assistant' && message.content?.startsWith('Checked in'),
    );
    console.log(`a schedule firing every 10 s: ${answers.length} answers in 35 s`);
    expect(answers.length).toBeGreaterThanOrEqual(2);
    const list = await cli('list');
    expect(list.stdout).toMatch(
      new RegExp(`Schedules \\(\\d+\\):[\\s\\S]*${id}\\s+${conversationId}\\s+-\\s+every 10s`),
    );

    expect(await cli('schedule', 'delete', id)).toMatchObject({ code: 0, stdout: `Schedule ${id} deleted.\n` });
    // A firing that started before the delete may still deliver: count once the conversation has caught up.
    const settled = await poll(
      () => client.status(conversationId),
      (status) => status.phase === 'idle' && status.queued === 0,
    );
    await sleep(12_000);
    const after = await client.status(conversationId);
    expect(after.turns).toBe(settled.turns);
    // Each firing was one message, named by its firing: no firing's message came twice.
    const ids = (await userMessages(conversationId)).map((message) => message.content);
    expect(ids.length).toBe(settled.turns);
    const pause = await cli('schedule', 'pause', id);
    expect(pause.code).toBe(ExitCode.NotFound);
    expect(pause.stderr).toContain(`No schedule ${id} in this namespace`);
  }, 180_000);

  it('schedule: skip drops a firing while a turn waits, queue queues its message; both are one message per firing', async () => {
    const conversationId = book.conversation('busy', [
      { toolCalls: [{ name: 'crm__update_field', arguments: { userId: 'u-1', field: 'plan', value: 'pro' } }] },
      { content: 'Done.' },
      { content: 'Queued one answered.' },
    ]);
    await client.send(conversationId, 'Change the plan, please.');
    const [pending] = await poll(
      () => client.pendingApprovals(conversationId),
      (calls) => calls.length === 1,
    );
    const skipping = scheduleId('skipping');
    const queueing = scheduleId('queueing');
    for (const [id, overlap] of [
      [skipping, 'skip'],
      [queueing, 'queue'],
    ] as const) {
      const created = await cli(
        'schedule',
        'create',
        id,
        '-c',
        conversationId,
        '--every',
        '1h',
        '--overlap',
        overlap,
        'Tick.',
      );
      expect(created.code).toBe(0);
      expect(await cli('schedule', 'trigger', id)).toMatchObject({ code: 0, stdout: `Schedule ${id} triggered.\n` });
    }
    expect(await latestFiring(skipping)).toMatchObject({ outcome: 'skipped', conversationId });
    const queued = await latestFiring(queueing);
    expect(queued).toMatchObject({ outcome: 'queued', conversationId, created: false, reopened: false });
    expect((await client.status(conversationId)).queued).toBe(1);
    // The conversation drops a skipIfBusy message itself (as when a turn starts between a firing's look and its send).
    await client.send(conversationId, 'Are you there?', { skipIfBusy: true });
    expect((await client.status(conversationId)).queued).toBe(1);

    await client.approve(conversationId, pending!.callId);
    await poll(
      () => client.status(conversationId),
      (status) => status.phase === 'idle' && status.turns === 2,
    );
    // The queued firing's message was answered, under its firing's id; the skipped one never reached the model.
    expect((await userMessages(conversationId)).map((message) => message.content)).toEqual([
      'Change the plan, please.',
      'Tick.',
    ]);
  }, 180_000);

  it('schedule: a conversation ended after the schedule was made gets a visible outcome, and the schedule pauses', async () => {
    const conversationId = book.conversation('ended', []);
    await client.start(conversationId);
    const id = scheduleId('ended');
    expect(
      (await cli('schedule', 'create', id, '-c', conversationId, '--cron', '0 9 * * 1-5', 'Good morning.')).code,
    ).toBe(0);
    await client.end(conversationId);
    await poll(
      () => client.status(conversationId),
      (status) => status.phase === 'ended' || !status.open,
    );
    expect((await cli('schedule', 'trigger', id)).code).toBe(0);
    const firing = await latestFiring(id);
    expect(firing).toMatchObject({ outcome: 'conversation_ended', conversationId });
    expect(firing.outcome === 'conversation_ended' && firing.reason).toContain(
      `Conversation ${conversationId} has ended`,
    );
    const paused = await poll(
      () => client.schedules.describe(id),
      (schedule) => schedule.paused,
    );
    expect(paused.note).toContain(`Conversation ${conversationId} has ended`);
    const listed = await cli('schedule', 'list');
    expect(listed.stdout).toMatch(
      new RegExp(`${id}\\s+${conversationId}\\s+-\\s+cron "0 9 \\* \\* 1-5"\\s+skip\\s+paused: `),
    );
    // And a new schedule for it is refused at once.
    const refused = await cli(
      'schedule',
      'create',
      scheduleId('late'),
      '-c',
      conversationId,
      '--every',
      '1m',
      'Hello?',
    );
    expect(refused.code).toBe(ExitCode.Ended);
    expect(refused.stderr).toContain(`Conversation ${conversationId} has ended`);
  }, 180_000);

  it('schedule: bad input exits 2 naming what was wrong; an unknown schedule exits 3', async () => {
    const conversationId = book.conversation('bad', []);
    const cron = await cli(
      'schedule',
      'create',
      scheduleId('cron'),
      '-c',
      conversationId,
      '--cron',
      '61 * * * *',
      'Hi',
    );
    expect(cron.stderr).toContain('Temporal refused the cron expression "61 * * * *"');
    expect(cron.code).toBe(ExitCode.Usage);
    const every = await cli(
      'schedule',
      'create',
      scheduleId('every'),
      '-c',
      conversationId,
      '--every',
      '10 parsecs',
      'Hi',
    );
    expect(every.code).toBe(ExitCode.Usage);
    expect(every.stderr).toContain('Interval "10 parsecs" is not a duration');
    const neither = await cli('schedule', 'create', scheduleId('neither'), '-c', conversationId, 'Hi');
    expect(neither.code).toBe(ExitCode.Usage);
    expect(neither.stderr).toContain('Give exactly one of --every DURATION');
    const badId = await cli('schedule', 'create', 'no spaces please', '-c', conversationId, '--every', '1m', 'Hi');
    expect(badId.code).toBe(ExitCode.Usage);
    expect(badId.stderr).toContain('A schedule id is 1 to 100 letters');
    for (const command of ['pause', 'unpause', 'trigger', 'delete']) {
      const unknown = await cli('schedule', command, 'never-made');
      expect(unknown.code, command).toBe(ExitCode.NotFound);
      expect(unknown.stderr, command).toContain('No schedule never-made in this namespace');
    }
    // None of the refused ones exists.
    expect((await client.schedules.list()).map((schedule) => schedule.conversationId)).not.toContain(conversationId);
  }, 180_000);
});
