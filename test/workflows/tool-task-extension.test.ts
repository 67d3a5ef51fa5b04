import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import type { ToolMessage } from '../../src/shared/types.js';
import { type ConversationOutcome, startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startTaskMcpServer, type RunningTaskServer } from '../../src/testing/mcp-task-server.js';
import { DEAF_UPDATES } from '../../src/testing/mcp-task-extension-server.js';
import type { Script } from '../../src/testing/scripted-model/script.js';
import { httpServer } from '../mcp/helpers.js';
import { clientStatusWhen } from '../helpers/status.js';
import { messageText, TASK_CALLS } from '../helpers/task-calls.js';

/**
 * MCP tasks of 2026-07-28 servers (the `io.modelcontextprotocol/tasks` extension, docs/mcp.md, "Tasks"), awaited
 * durably on the time-skipping server: the same activities as 2025-11-25 tasks, spoken in the extension's terms. Our
 * task test server speaks both revisions; the pool probes it over HTTP and chooses 2026-07-28, unless pinned.
 */

let env: TestWorkflowEnvironment;
let server: RunningTaskServer;
let agent: TestAgent;
let pinned: TestAgent;
let client: DurableAgentClient;

const CALLS = TASK_CALLS;

const text = messageText;

const script: Script = (request) => {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { content: `the tool said: ${text(last.content)}` };
  const calls = CALLS[text(last?.content)];
  return calls ? { toolCalls: calls } : { content: `no tools for ${text(last?.content)}` };
};

beforeAll(async () => {
  [env, server] = await Promise.all([createTimeSkippingEnvironment(), startTaskMcpServer({ extension: true })]);
  agent = await startTestAgent({ env, mcpServers: [httpServer('tasks', server.url)], script });
  pinned = await startTestAgent({
    env,
    model: agent.model,
    mcpServers: [httpServer('tasks', server.url, { protocolVersion: '2025-11-25' })],
  });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await Promise.allSettled([agent?.close(), pinned?.close(), server?.close()]);
  await env?.teardown();
});

async function run(on: TestAgent, content: string, settings = {}) {
  const id = randomUUID();
  const handle = await on.startConversation(id, { settings, messages: [{ id: 'm1', content }], closeWhenIdle: true });
  await handle.result(); // time skips while the turn sleeps between polls
  return { id, handle, tools: await toolMessages(on, id) };
}

async function toolMessages(on: TestAgent, id: string): Promise<ToolMessage[]> {
  const transcript = await new DurableAgentClient({ client: env.client, taskQueue: on.taskQueue }).fullTranscript(id);
  return transcript.filter((message): message is ToolMessage => message.role === 'tool');
}

async function activityTypes(handle: WorkflowHandle): Promise<string[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((event) => {
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return type ? [type] : [];
  });
}

/** Polled in real time: nothing is skipped while this waits. */
const statusWhen = <T>(id: string, ready: (status: Awaited<ReturnType<DurableAgentClient['status']>>) => T) =>
  clientStatusWhen(client, id, ready);

/** The patch ids a history's markers record (each marker's payloads, decoded). */
function patchesOf(events: NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>): string[] {
  return events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    return Object.values(marker.details ?? {}).flatMap((detail) =>
      (detail.payloads ?? []).map((payload) => Buffer.from(payload.data ?? []).toString('utf8')),
    );
  });
}

const lastCall = (tool: string) => server.counters.calls.filter((call) => call.tool === tool).at(-1);

describe('a 2026-07-28 server answers a call with a task of the tasks extension', () => {
  it('a task of fifteen minutes: declared, polled with tasks/get on durable timers, its result reaches the model', async () => {
    const { handle, tools } = await run(agent, 'long');
    expect(lastCall('long_job')).toEqual({ tool: 'long_job', task: true, revision: '2026-07-28' });
    expect(tools).toMatchObject([{ outcome: 'ok', content: 'finished the long job after 30 polls' }]);
    const types = await activityTypes(handle);
    expect(types.filter((type) => type === 'callTool')).toHaveLength(1);
    expect(types.filter((type) => type === 'pollToolTask')).toHaveLength(30);
    expect(types.filter((type) => type === 'toolTaskResult')).toHaveLength(1);
    const { events } = await handle.fetchHistory();
    const seconds = Number(events!.at(-1)!.eventTime!.seconds) - Number(events![0]!.eventTime!.seconds);
    expect(seconds).toBeGreaterThanOrEqual(15 * 60);
    expect(server.counters.results).toEqual([]); // no `tasks/result`: the extension's tasks/get carries the result
  });

  it('a question of the task goes through inputs / answer, goes back by tasks/update, and the task finishes', async () => {
    const id = randomUUID();
    const handle = await agent.startConversation(id, { messages: [{ id: 'm1', content: 'ask' }], closeWhenIdle: true });
    // A minute of workflow time, to the first poll; not `result()`, which would skip time through the question's wait.
    await env.sleep('1 minute');
    const done = () => handle.result();
    const request = await statusWhen(id, (status) => status.pendingInputs?.[0]);
    expect(request).toMatchObject({
      message: 'Which colour should the job paint?',
      tool: 'tasks__ask_job',
      requestedSchema: { properties: { colour: { type: 'string' } } },
    });
    expect(request.requestId).toMatch(/:1\.task:colour$/);
    await client.answerInput(id, request.requestId, { action: 'accept', content: { colour: 'teal' }, by: 'ada' });
    await done();
    const update = server.counters.updates.at(-1)!;
    expect(update.taskId).toMatch(/ask_job$/);
    expect(update.inputResponses).toEqual({ colour: { action: 'accept', content: { colour: 'teal' } } });
    expect(await toolMessages(agent, id)).toMatchObject([{ outcome: 'ok', content: 'painted teal' }]);
    expect((await client.status(id)).lastResult).toMatchObject({ answer: 'the tool said: painted teal' });
  });

  it('an interrupt while the task works sends tasks/cancel; the model reads that it was cancelled', async () => {
    const id = randomUUID();
    const handle = await agent.startConversation(id, {
      messages: [{ id: 'm1', content: 'never' }],
      closeWhenIdle: true,
    });
    const activity = await statusWhen(id, (status) =>
      status.currentTurn?.activity?.startsWith('waiting for task') ? status.currentTurn.activity : undefined,
    );
    expect(activity).toMatch(
      /^waiting for task task-\d+-never_done of tasks__never_done \(0 polls, last status working\)$/,
    );
    const before = server.counters.cancelled.length;
    await client.interrupt(id, { reason: 'enough' });
    await handle.result();
    expect(server.counters.cancelled.slice(before)).toEqual([expect.stringMatching(/never_done$/)]);
    const tools = await toolMessages(agent, id);
    expect(tools).toMatchObject([{ outcome: 'cancelled' }]);
    expect(tools[0]!.content).toContain('interrupted the turn while this call waited for its task');
  });
});

describe('a task’s question waits in the workflow, with no activity open', () => {
  async function askJob(on: TestAgent, settings = {}, content = 'ask') {
    const id = randomUUID();
    const handle = await on.startConversation(id, {
      settings,
      messages: [{ id: 'm1', content }],
      closeWhenIdle: true,
    });
    // Not `result()`, which would skip time through the question's wait: a minute, to the poll that brings it.
    await env.sleep('1 minute');
    const request = await statusWhen(id, (status) => status.pendingInputs?.[0]);
    return { id, handle, request };
  }

  const countOf = (types: string[], type: string) => types.filter((name) => name === type).length;

  it('answered through `answer` after the worker was replaced while it waited; the answer reaches the result', async () => {
    const taskQueue = `test-${randomUUID()}`;
    const options = { env, model: agent.model, mcpServers: [httpServer('tasks', server.url)], taskQueue };
    // Without a workflow cache the run is on no worker's sticky queue when that worker goes, and every task replays.
    const first = await startTestAgent({ ...options, workerOptions: { worker: { maxCachedWorkflows: 0 } } });
    const { id, handle, request } = await askJob(first);
    expect(request).toMatchObject({ tool: 'tasks__ask_job', message: 'Which colour should the job paint?' });
    expect(request.expiresAt).toBeUndefined();
    const status = await client.status(id);
    expect(status.phase).toBe('awaiting_input');
    expect(status.currentTurn?.activity).toMatch(
      /^waiting for task \S+ask_job of tasks__ask_job \(1 poll, last status input_required\)$/,
    );
    expect((await handle.describe()).raw.pendingActivities ?? []).toEqual([]);
    await first.close();
    await env.sleep('2 hours'); // no activity waits, so nothing times out and nothing is retried
    await using second = await startTestAgent(options);
    const answering = new DurableAgentClient({ client: env.client, taskQueue: second.taskQueue });
    expect(await answering.pendingInputs(id)).toEqual([request]);
    const updatesBefore = server.counters.updates.length;
    await answering.answerInput(id, request.requestId, { action: 'accept', content: { colour: 'ochre' } });
    await handle.result();
    expect(server.counters.updates.slice(updatesBefore)).toEqual([
      {
        taskId: expect.stringMatching(/ask_job$/),
        inputResponses: { colour: { action: 'accept', content: { colour: 'ochre' } } },
      },
    ]);
    expect(await toolMessages(second, id)).toMatchObject([{ outcome: 'ok', content: 'painted ochre' }]);
    const types = await activityTypes(handle);
    // The question came with a poll and went back with `answerToolTask`; `toolTaskResult` only fetched the result.
    expect(countOf(types, 'answerToolTask')).toBe(1);
    expect(countOf(types, 'toolTaskResult')).toBe(1);
    const { events } = await handle.fetchHistory();
    // Nothing was retried: the worker that went away had no activity open.
    expect(events!.filter((event) => (event.activityTaskStartedEventAttributes?.attempt ?? 1) > 1)).toEqual([]);
    expect(patchesOf(events!)).toEqual([expect.stringContaining('task-questions-in-workflow')]);
  });

  it('answers the server refuses five times: sent again after the next poll, and the person is asked once', async () => {
    const { id, handle, request } = await askJob(agent, {}, 'deaf');
    const updatesBefore = server.counters.updates.length;
    await client.answerInput(id, request.requestId, { action: 'accept', content: { colour: 'teal' } });
    await handle.result();

    // Five refused by the server (answerToolTask's five attempts), then the same answers again after the next poll.
    const sent = server.counters.updates.slice(updatesBefore);
    expect(sent).toHaveLength(DEAF_UPDATES + 1);
    for (const update of sent) {
      expect(update).toEqual({
        taskId: expect.stringMatching(/deaf_ask_job$/),
        inputResponses: { colour: { action: 'accept', content: { colour: 'teal' } } },
      });
    }
    expect(await toolMessages(agent, id)).toMatchObject([{ outcome: 'ok', content: 'painted teal' }]);
    const types = await activityTypes(handle);
    // Two rounds of five attempts and one; the second found the question answered and sent the answer without asking
    // (asked again, it would have waited for an answer nobody gave, until maxTaskWaitMs, and the task had no result).
    expect(countOf(types, 'answerToolTask')).toBe(2);
  });

  it('a declined question: decline goes back by tasks/update, and the task finishes without a colour', async () => {
    const { id, handle, request } = await askJob(agent);
    await client.answerInput(id, request.requestId, { action: 'decline' });
    await handle.result();
    expect(server.counters.updates.at(-1)).toEqual({
      taskId: expect.stringMatching(/ask_job$/),
      inputResponses: { colour: { action: 'decline' } },
    });
    expect(await toolMessages(agent, id)).toMatchObject([{ outcome: 'ok', content: 'painted nothing (decline)' }]);
  });

  it('an interrupt while the question waits: it is answered cancel, nothing is sent, the task is cancelled', async () => {
    const { id, handle, request } = await askJob(agent);
    const updatesBefore = server.counters.updates.length;
    await client.interrupt(id, { reason: 'enough' });
    const { state } = (await handle.result()) as ConversationOutcome;
    expect(server.counters.updates.length).toBe(updatesBefore);
    expect(server.counters.cancelled.at(-1)).toMatch(/ask_job$/);
    const tools = await toolMessages(agent, id);
    expect(tools).toMatchObject([{ outcome: 'cancelled' }]);
    expect(tools[0]!.content).toContain('interrupted the turn while this call waited for its task');
    expect(state.streamEvents?.find((event) => event.type === 'input_answered')).toMatchObject({
      requestId: request.requestId,
      action: 'cancel',
      by: 'interrupt',
    });
    expect(await activityTypes(handle)).not.toContain('answerToolTask');
  });

  it('a question nobody answers within maxTaskWaitMs: withdrawn, the task cancelled, the model reads why', async () => {
    const { id, handle, request } = await askJob(agent, { budget: { maxTaskWaitMs: 30 * 60_000 } });
    const updatesBefore = server.counters.updates.length;
    const { state } = (await handle.result()) as ConversationOutcome; // time skips through the wait, to its end
    expect(server.counters.updates.length).toBe(updatesBefore);
    expect(server.counters.cancelled.at(-1)).toMatch(/ask_job$/);
    const tools = await toolMessages(agent, id);
    expect(tools).toMatchObject([{ outcome: 'budget_exhausted' }]);
    expect(tools[0]!.content).toContain('asked the person a question that had no answer within 1800 s');
    expect(await client.pendingInputs(id)).toEqual([]);
    const answered = state.streamEvents?.find((event) => event.type === 'input_answered');
    expect(answered).toMatchObject({ requestId: request.requestId, action: 'cancel', by: 'timeout' });
  });
});

describe('bad servers of the extension: a tool result the model sees, never a stuck turn', () => {
  it('a server that declares the extension and answers plainly: that result is the call’s result', async () => {
    const { handle, tools } = await run(agent, 'plain');
    expect(tools).toMatchObject([{ outcome: 'ok', content: 'plain_answer: a plain result' }]);
    expect(await activityTypes(handle)).not.toContain('pollToolTask');
  });

  it('a task answer that is not a task (no taskId): an error naming what was wrong, nothing polled', async () => {
    const { handle, tools } = await run(agent, 'broken');
    expect(tools).toMatchObject([{ outcome: 'error' }]);
    expect(tools[0]!.content).toContain('"broken_task" answered with a task that is not one');
    expect(await activityTypes(handle)).not.toContain('pollToolTask');
  });

  it('an unknown task (-32602 at tasks/get): an error naming the task', async () => {
    const { tools } = await run(agent, 'forgetful');
    expect(tools).toMatchObject([{ outcome: 'error' }]);
    expect(tools[0]!.content).toMatch(/task task-\d+-forgetful, which its server no longer knows/);
    expect(tools[0]!.content).toContain('Task not found');
  });

  it('an expired task: the error says the server keeps a task for its ttlMs', async () => {
    const { tools } = await run(agent, 'expiring');
    expect(tools).toMatchObject([{ outcome: 'error' }]);
    expect(tools[0]!.content).toContain('Task has expired');
    expect(tools[0]!.content).toContain('the server keeps a task 60000 ms, so it may have expired');
  });

  it('a failed task: its JSON-RPC error reaches the model as an error', async () => {
    const { tools } = await run(agent, 'failing');
    expect(tools).toMatchObject([{ outcome: 'error' }]);
    expect(tools[0]!.content).toMatch(/task task-\d+-failing_job failed: the job broke \(JSON-RPC error -32603\)/);
  });

  it('a task id given twice: the call it reached second gets an error, the other its result', async () => {
    const { tools } = await run(agent, 'twice');
    expect(tools.map((tool) => tool.outcome).sort()).toEqual(['error', 'ok']);
    expect(tools.find((tool) => tool.outcome === 'ok')!.content).toBe('finished same_id after 2 polls');
    expect(tools.find((tool) => tool.outcome === 'error')!.content).toContain('with task the-only-task');
  });
});

describe('which revision’s tasks a server gets', () => {
  it('probed over HTTP: 2026-07-28 and the extension; pinned to 2025-11-25: a session and SEP-1686 tasks', async () => {
    const probed = await run(agent, 'short');
    expect(probed.tools).toMatchObject([{ outcome: 'ok', content: 'finished the short job after 2 polls' }]);
    expect(lastCall('long_job')).toEqual({ tool: 'long_job', task: true, revision: '2026-07-28' });
    const resultsBefore = server.counters.results.length;
    const session = await run(pinned, 'short');
    expect(session.tools).toMatchObject([{ outcome: 'ok', content: 'finished the short job after 2 polls' }]);
    // A 2025-11-25 call made with `task` (its tool listed `execution.taskSupport: "required"`), its result by tasks/result.
    expect(lastCall('long_job')).toEqual({ tool: 'long_job', task: true });
    expect(server.counters.results.length).toBe(resultsBefore + 1);
  });
});
