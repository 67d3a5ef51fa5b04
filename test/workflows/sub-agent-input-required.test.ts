import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import type { ToolMessage } from '../../src/shared/types.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startModernMcpServer, type RunningModernServer } from '../../src/testing/mcp-modern-server.js';
import { startTaskMcpServer, type RunningTaskServer } from '../../src/testing/mcp-task-server.js';
import type { Script } from '../../src/testing/scripted-model/script.js';
import { DEFAULT_MAX_TASK_WAIT_MS } from '../../src/workflows/budget.js';
import { answerInputUpdate, pollEventsUpdate } from '../../src/workflows/definitions.js';
import { FORWARD_SUB_AGENT_INPUTS } from '../../src/workflows/sub-agent-inputs.js';
import { subAgentWorkflowId } from '../../src/workflows/sub-agents.js';
import { defineSubAgent } from '../../src/worker/tools/index.js';
import { httpServer } from '../mcp/helpers.js';
import { clientStatusWhen } from '../helpers/status.js';

/**
 * A 2026-07-28 server's questions inside a sub-agent (a plain `input_required` answer's, a task's) wait in the calling
 * conversation, as the sub-agent's approvals do: listed there under `<calling call id>/<child's request id>`,
 * answered there (checked against the question's schema), and the answer goes on to the sub-agent. A question the
 * sub-agent settles itself (its task's wait ran out) is dropped from the conversation. On the time-skipping server.
 */

let env: TestWorkflowEnvironment;
let modern: RunningModernServer;
let tasks: RunningTaskServer;
let agent: TestAgent;
let client: DurableAgentClient;

const text = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));

/** The conversation hands its message to the sub-agent; the sub-agent calls the tool its task names. */
const script: Script = (request) => {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { content: `heard: ${text(last.content)}` };
  const task = text(last?.content);
  if (!request.conversation.includes('/agent-')) {
    return { toolCalls: [{ name: 'agent__greeter', arguments: { task } }] };
  }
  return task === 'job'
    ? { toolCalls: [{ name: 'tasks__ask_job', arguments: {} }] }
    : { toolCalls: [{ name: 'modern__ask_name', arguments: { message: 'Who are you?' } }] };
};

beforeAll(async () => {
  [env, modern, tasks] = await Promise.all([
    createTimeSkippingEnvironment(),
    startModernMcpServer(),
    startTaskMcpServer({ extension: true }),
  ]);
  agent = await startTestAgent({
    env,
    mcpServers: [httpServer('modern', modern.url), httpServer('tasks', tasks.url)],
    script,
    workerOptions: {
      tools: [
        defineSubAgent({
          name: 'greeter',
          description: 'Greets.',
          settings: { tools: ['modern__ask_name', 'tasks__ask_job'] },
        }),
      ],
    },
  });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await Promise.allSettled([agent?.close(), modern?.close(), tasks?.close()]);
  await env?.teardown();
});

/** Polled in real time: nothing is skipped while this waits. */
const statusWhen = <T>(id: string, ready: (status: Awaited<ReturnType<DurableAgentClient['status']>>) => T) =>
  clientStatusWhen(client, id, ready);

async function toolMessages(id: string): Promise<ToolMessage[]> {
  const transcript = await client.fullTranscript(id);
  return transcript.filter((message): message is ToolMessage => message.role === 'tool');
}

it("a sub-agent's input_required question is listed, checked and answered in the calling conversation", async () => {
  const id = randomUUID();
  const handle = await agent.startConversation(id, { messages: [{ id: 'm1', content: 'ask' }], closeWhenIdle: false });
  const request = await statusWhen(id, (status) => status.pendingInputs?.[0]);
  expect(request).toMatchObject({
    tool: 'modern__ask_name',
    server: 'modern',
    mode: 'form',
    message: 'Who are you?',
    requestedSchema: expect.objectContaining({ required: ['name'] }),
  });
  // `<calling call id>/<child's request id>`, the child's id naming its own call, turn and round.
  expect(request.requestId).toBe(`${request.callId}/${request.requestId.split('/')[1]}`);
  expect(request.requestId.split('/')[1]).toMatch(/:1\.1:name$/);
  expect((await client.status(id)).phase).toBe('awaiting_input');

  // An answer that does not fit the question's schema is refused here, and the question still waits.
  await expect(client.answerInput(id, request.requestId, { action: 'accept', content: { name: 7 } })).rejects.toThrow(
    /does not match the requested fields/,
  );
  expect(await client.pendingInputs(id)).toEqual([request]);

  await client.answerInput(id, request.requestId, { action: 'accept', content: { name: 'Ada' }, by: 'ada' });
  const result = await statusWhen(id, (status) => status.lastResult);
  expect(result).toMatchObject({ stopReason: 'completed' });
  const [subAgent] = await toolMessages(id);
  expect(subAgent).toMatchObject({ name: 'agent__greeter', outcome: 'ok', toolCallId: request.callId });
  // The sub-agent's answer quotes its tool's result, which greets the name the person gave here.
  expect(subAgent!.content).toContain('Hello, Ada');
  const { events } = await handle.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] });
  expect(events).toContainEqual(
    expect.objectContaining({ type: 'input_answered', requestId: request.requestId, action: 'accept', by: 'ada' }),
  );
  await handle.terminate('done');
});

it("a sub-agent's task question is answered in the calling conversation; one whose wait runs out is dropped", async () => {
  const answered = randomUUID();
  const first = await agent.startConversation(answered, {
    messages: [{ id: 'm1', content: 'job' }],
    closeWhenIdle: true,
  });
  // A minute of workflow time, to the child's first poll; not `result()`, which would skip through the wait.
  await env.sleep('1 minute');
  const question = await statusWhen(answered, (status) => status.pendingInputs?.[0]);
  expect(question).toMatchObject({ tool: 'tasks__ask_job', message: 'Which colour should the job paint?' });
  expect(question.requestId).toMatch(/^[^/]+\/.*:1\.task:colour$/);
  await client.answerInput(answered, question.requestId, { action: 'accept', content: { colour: 'teal' } });
  await first.result();
  expect(tasks.counters.updates.at(-1)!.inputResponses).toEqual({
    colour: { action: 'accept', content: { colour: 'teal' } },
  });
  expect((await toolMessages(answered))[0]!.content).toContain('painted teal');

  const unanswered = randomUUID();
  const second = await agent.startConversation(unanswered, {
    messages: [{ id: 'm1', content: 'job' }],
    closeWhenIdle: false,
  });
  await env.sleep('1 minute');
  const copy = await statusWhen(unanswered, (status) => status.pendingInputs?.[0]);
  await env.sleep(DEFAULT_MAX_TASK_WAIT_MS + 60_000);
  const result = await statusWhen(unanswered, (status) => status.lastResult);
  expect(result).toMatchObject({ stopReason: 'completed' });
  const status = await client.status(unanswered);
  expect(status.pendingInputs ?? []).toEqual([]);
  const { events } = await second.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] });
  expect(events).toContainEqual(
    expect.objectContaining({ type: 'input_answered', requestId: copy.requestId, action: 'cancel', by: 'timeout' }),
  );
  await second.terminate('done');
});

it("a question answered on the sub-agent's own workflow id is dropped from the calling conversation", async () => {
  const id = randomUUID();
  const handle = await agent.startConversation(id, { messages: [{ id: 'm1', content: 'ask' }], closeWhenIdle: false });
  const copy = await statusWhen(id, (status) => status.pendingInputs?.[0]);
  const [callId, childRequestId] = copy.requestId.split('/') as [string, string];
  const child = env.client.workflow.getHandle(subAgentWorkflowId(handle.workflowId, 1, callId));
  await child.executeUpdate(answerInputUpdate, {
    args: [{ requestId: childRequestId, action: 'accept', content: { name: 'Bo' }, by: 'bo' }],
  });
  const result = await statusWhen(id, (status) => status.lastResult);
  expect(result).toMatchObject({ stopReason: 'completed' });
  expect((await client.status(id)).pendingInputs ?? []).toEqual([]);
  expect((await toolMessages(id))[0]!.content).toContain('Hello, Bo');
  const { events } = await handle.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] });
  expect(events).toContainEqual(
    expect.objectContaining({ type: 'input_answered', requestId: copy.requestId, action: 'accept', by: 'bo' }),
  );
  // The child's report is a command recorded children never emitted: its history marks the patch.
  const { events: history } = await child.fetchHistory();
  const patches = (history ?? []).flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_patch') return [];
    return Object.values(marker.details ?? {}).flatMap((detail) =>
      (detail.payloads ?? []).map((payload) => Buffer.from(payload.data ?? []).toString('utf8')),
    );
  });
  expect(patches.join(' ')).toContain(FORWARD_SUB_AGENT_INPUTS);
  await handle.terminate('done');
});

it("an interrupt while a sub-agent's question waits cancels the question and the sub-agent", async () => {
  const id = randomUUID();
  const handle = await agent.startConversation(id, { messages: [{ id: 'm1', content: 'ask' }], closeWhenIdle: false });
  const copy = await statusWhen(id, (status) => status.pendingInputs?.[0]);
  await client.interrupt(id, { reason: 'enough' });
  const result = await statusWhen(id, (status) => status.lastResult);
  expect(result).toMatchObject({ stopReason: 'cancelled' });
  expect((await client.status(id)).pendingInputs ?? []).toEqual([]);
  expect(await toolMessages(id)).toMatchObject([{ name: 'agent__greeter', outcome: 'cancelled' }]);
  const { events } = await handle.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] });
  expect(events).toContainEqual(
    expect.objectContaining({ type: 'input_answered', requestId: copy.requestId, action: 'cancel', by: 'interrupt' }),
  );
  const [callId] = copy.requestId.split('/') as [string];
  const child = env.client.workflow.getHandle(subAgentWorkflowId(handle.workflowId, 1, callId));
  expect((await child.describe()).status.name).toBe('CANCELLED');
  await handle.terminate('done');
});
