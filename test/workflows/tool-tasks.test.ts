import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import type { ToolMessage } from '../../src/shared/types.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startTaskMcpServer, type RunningTaskServer } from '../../src/testing/mcp-task-server.js';
import type { Script } from '../../src/testing/scripted-model/script.js';
import { httpServer } from '../mcp/helpers.js';
import { messageText, TASK_CALLS } from '../helpers/task-calls.js';

/**
 * MCP tasks awaited durably (docs/mcp.md, "Tasks"), on the time-skipping server: a task that takes longer than the
 * turn's ten minutes, and servers that misbehave. Our task test server's tasks are done after a number of polls, each
 * 30 s of workflow time apart.
 */

let env: TestWorkflowEnvironment;
let server: RunningTaskServer;
let agent: TestAgent;
let optionalAgent: TestAgent;
let client: DurableAgentClient;

const CALLS = TASK_CALLS;

const text = messageText;

const script: Script = (request) => {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { content: 'done' };
  const calls = CALLS[text(last?.content)];
  return calls ? { toolCalls: calls } : { content: `no tools for ${text(last?.content)}` };
};

beforeAll(async () => {
  [env, server] = await Promise.all([createTimeSkippingEnvironment(), startTaskMcpServer()]);
  agent = await startTestAgent({ env, mcpServers: [httpServer('tasks', server.url)], script });
  optionalAgent = await startTestAgent({
    env,
    model: agent.model,
    mcpServers: [httpServer('tasks', server.url, { optionalTasks: true })],
  });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await Promise.allSettled([agent?.close(), optionalAgent?.close(), server?.close()]);
  await env?.teardown();
});

async function run(
  on: TestAgent,
  content: string,
  settings = {},
): Promise<{ id: string; handle: WorkflowHandle; tools: ToolMessage[] }> {
  const id = randomUUID();
  const handle = await on.startConversation(id, { settings, messages: [{ id: 'm1', content }], closeWhenIdle: true });
  await handle.result(); // time skips while the turn sleeps between polls
  const tools = (await clientOf(on).fullTranscript(id)).filter((message) => message.role === 'tool');
  return { id, handle, tools };
}

const clientOf = (on: TestAgent) => new DurableAgentClient({ client: env.client, taskQueue: on.taskQueue });

async function activityTypes(handle: WorkflowHandle): Promise<string[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((event) => {
    const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return type ? [type] : [];
  });
}

describe('a tool call answered with a task waits on durable timers, not in an activity', () => {
  it('a task of fifteen minutes outlasts the turn’s ten: its result reaches the model', async () => {
    const { handle, tools } = await run(agent, 'long');
    expect(tools).toMatchObject([{ outcome: 'ok', content: 'finished the long job after 30 polls' }]);
    const types = await activityTypes(handle);
    expect(types.filter((type) => type === 'callTool')).toHaveLength(1);
    expect(types.filter((type) => type === 'pollToolTask')).toHaveLength(30);
    expect(types.filter((type) => type === 'toolTaskResult')).toHaveLength(1);
    const { events } = await handle.fetchHistory();
    const started = Number(events![0]!.eventTime!.seconds);
    const ended = Number(events!.at(-1)!.eventTime!.seconds);
    expect(ended - started).toBeGreaterThanOrEqual(15 * 60);
    const last = await client.status(handle.workflowId.replace(/^conversation-/, ''));
    expect(last.lastResult).toMatchObject({ stopReason: 'completed' });
  });

  it('maxTaskWaitMs: a task that never ends is cancelled, and the model reads that it took too long', async () => {
    const { tools } = await run(agent, 'never', { budget: { maxTaskWaitMs: 20 * 60_000 } });
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ outcome: 'budget_exhausted' });
    expect(tools[0]!.content).toContain('was still working after 1200 s');
    expect(tools[0]!.content).toContain('maxTaskWaitMs');
    expect(server.counters.cancelled.filter((id) => id.endsWith('never_done')).length).toBeGreaterThanOrEqual(1);
  });

  it('a server that claims task support and answers with a plain result: the model gets that result', async () => {
    const { handle, tools } = await run(agent, 'plain');
    expect(tools).toMatchObject([{ outcome: 'ok', content: 'plain_answer: a plain result' }]);
    expect(await activityTypes(handle)).not.toContain('pollToolTask');
  });

  it('a task id the server gave twice: the call it reached second gets an error, the other its result', async () => {
    const { tools } = await run(agent, 'twice');
    // The two calls run in parallel: which task creation completes first (and owns the id) is the server's order.
    expect(tools.map((tool) => tool.outcome).sort()).toEqual(['error', 'ok']);
    const ok = tools.find((tool) => tool.outcome === 'ok')!;
    const refused = tools.find((tool) => tool.outcome === 'error')!;
    expect(ok.content).toBe('finished same_id after 2 polls');
    expect(refused.content).toContain('with task the-only-task, the id of a task it had already given call');
    expect(server.counters.cancelled).not.toContain('the-only-task');
  });

  it('a task the server does not know: a tool error the model sees, not a stuck turn', async () => {
    const { tools } = await run(agent, 'forgetful');
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({ outcome: 'error' });
    expect(tools[0]!.content).toContain('which its server no longer knows');
    expect(tools[0]!.content).toContain('Task not found');
  });

  it('a failed task: its error result reaches the model as an error', async () => {
    const { tools } = await run(agent, 'failing');
    expect(tools).toMatchObject([{ outcome: 'error', content: 'it broke' }]);
  });

  it('an interrupt while the task works sends tasks/cancel; the model reads that it was cancelled', async () => {
    const id = randomUUID();
    const handle = await agent.startConversation(id, {
      messages: [{ id: 'm1', content: 'never' }],
      closeWhenIdle: true,
    });
    for (let attempt = 0; attempt < 300; attempt++) {
      const activity = (await client.status(id)).currentTurn?.activity ?? '';
      if (activity.startsWith('waiting for task')) break;
      await sleep(100);
    }
    expect((await client.status(id)).currentTurn?.activity).toMatch(
      /^waiting for task task-\d+-never_done of tasks__never_done \(0 polls, last status working\)$/,
    );
    const before = server.counters.cancelled.length;
    await client.interrupt(id, { reason: 'enough' });
    await handle.result();
    expect(server.counters.cancelled.length).toBe(before + 1);
    const tools = (await client.fullTranscript(id)).filter((message) => message.role === 'tool');
    expect(tools).toMatchObject([{ outcome: 'cancelled' }]);
    expect(tools[0]!.content).toContain('interrupted the turn while this call waited for its task');
  });

  it('`end` while the task works sends tasks/cancel; the turn ends with the call cancelled', async () => {
    const id = randomUUID();
    const handle = await agent.startConversation(id, { messages: [{ id: 'm1', content: 'never' }] });
    for (let attempt = 0; attempt < 300; attempt++) {
      if ((await client.status(id)).currentTurn?.activity?.startsWith('waiting for task')) break;
      await sleep(100);
    }
    const before = server.counters.cancelled.length;
    await client.end(id);
    await handle.result();
    expect(server.counters.cancelled.length).toBe(before + 1);
    const tools = (await client.fullTranscript(id)).filter((message) => message.role === 'tool');
    expect(tools).toMatchObject([{ outcome: 'cancelled' }]);
    expect(tools[0]!.content).toContain('The conversation was ended while this call waited for its task');
  });

  it('taskSupport optional: a plain call by default, a task with the server’s optionalTasks', async () => {
    const calls = () => server.counters.calls.filter((call) => call.tool === 'optional_job');
    const plain = await run(agent, 'optional');
    expect(plain.tools).toMatchObject([{ outcome: 'ok', content: 'optional_job: a plain result' }]);
    expect(calls().at(-1)).toEqual({ tool: 'optional_job', task: false });
    const asTask = await run(optionalAgent, 'optional');
    expect(asTask.tools).toMatchObject([{ outcome: 'ok', content: 'finished optional_job after 1 polls' }]);
    expect(calls().at(-1)).toEqual({ tool: 'optional_job', task: true });
  });
});
