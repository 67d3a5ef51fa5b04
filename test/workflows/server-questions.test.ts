import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import type { InputRequest } from '../../src/shared/input-messages.js';
import type { ChatMessage, JsonObject } from '../../src/shared/types.js';
import { startTestAgent, type ConversationOutcome, type TestAgent } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startModernMcpServer, type RunningModernServer } from '../../src/testing/mcp-modern-server.js';
import type { Script } from '../../src/testing/scripted-model/script.js';
import { pollEventsUpdate } from '../../src/workflows/definitions.js';
import { MAX_QUESTION_ROUNDS } from '../../src/workflows/tool-questions.js';
import { httpServer } from '../mcp/helpers.js';

/**
 * A 2026-07-28 server's questions (`input_required`) as durable waits, on the time-skipping server: the tool activity
 * ends with the questions, the turn waits with no activity open, and the call is sent again with the answers and the
 * server's `requestState` as a new activity.
 */

let env: TestWorkflowEnvironment;
let server: RunningModernServer;
let agent: TestAgent;
let client: DurableAgentClient;

/** What each user message makes the model call; after the tool results it answers with them. */
const CALLS: Record<string, { name: string; arguments: JsonObject }[]> = {
  ask: [{ name: 'modern__ask_name', arguments: { message: 'What is your name?' } }],
  two: [
    { name: 'modern__ask_name', arguments: { message: 'Who signs the order?' } },
    { name: 'modern__ask_name', arguments: { message: 'Who approves it?' } },
  ],
  forever: [{ name: 'modern__ask_forever', arguments: {} }],
  sampling: [{ name: 'modern__ask_sampling', arguments: { ask: 'sampling' } }],
  roots: [{ name: 'modern__ask_sampling', arguments: { ask: 'roots' } }],
};

/** Message content as text (the scripted model records what the provider sent: a string here). */
const text = (content: unknown): string => (typeof content === 'string' ? content : JSON.stringify(content));

const script: Script = (request) => {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') {
    const results = request.messages.slice(request.messages.findLastIndex((message) => message.role !== 'tool') + 1);
    return { content: `the tools said: ${results.map((message) => text(message.content)).join(' | ')}` };
  }
  const calls = CALLS[text(last?.content)];
  return calls ? { toolCalls: calls } : { content: `no tools for ${text(last?.content)}` };
};

beforeAll(async () => {
  [env, server] = await Promise.all([createTimeSkippingEnvironment(), startModernMcpServer()]);
  agent = await startTestAgent({ env, mcpServers: [httpServer('modern', server.url)], script });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await Promise.allSettled([agent?.close(), server?.close()]);
  await env?.teardown();
});

/** `closeWhenIdle: false` keeps the run open after its turn, so its events can still be polled. */
async function start(
  content: string,
  settings = {},
  closeWhenIdle = true,
): Promise<{ id: string; handle: WorkflowHandle }> {
  const id = randomUUID();
  const handle = await agent.startConversation(id, { settings, messages: [{ id: 'm1', content }], closeWhenIdle });
  return { id, handle };
}

/** The first turn's result of a run kept open (real time: the turn runs activities, which stop time skipping). */
async function firstResult(id: string) {
  for (let attempt = 0; attempt < 300; attempt++) {
    const { lastResult } = await client.status(id);
    if (lastResult) return lastResult;
    await sleep(100);
  }
  throw new Error(`no turn result in ${id}`);
}

/** The pending questions, once there are `count` of them (real time: nothing is skipped while this polls). */
async function questions(id: string, count = 1): Promise<InputRequest[]> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const pending = await client.pendingInputs(id);
    if (pending.length >= count) return pending;
    await sleep(100);
  }
  throw new Error(`expected ${count} pending questions in ${id}`);
}

async function outcome(handle: WorkflowHandle): Promise<ConversationOutcome> {
  return (await handle.result()) as ConversationOutcome;
}

async function toolMessages(id: string): Promise<ChatMessage[]> {
  return (await client.fullTranscript(id)).filter((message) => message.role === 'tool');
}

async function scheduledToolCalls(handle: WorkflowHandle): Promise<string[]> {
  const { events } = await handle.fetchHistory();
  return (events ?? [])
    .map((event) => event.activityTaskScheduledEventAttributes)
    .filter((scheduled) => scheduled?.activityType?.name === 'callTool')
    .map((scheduled) => scheduled!.activityId ?? '');
}

async function events(handle: WorkflowHandle) {
  return (await handle.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] })).events;
}

describe('questions by input_required wait in the workflow, not in an activity', () => {
  it('a question answered after three days: no activity open meanwhile, then the call is sent again', async () => {
    const before = server.counters.calls.ask_name ?? 0;
    const { id, handle } = await start('ask', {}, false);
    const [question] = await questions(id);
    expect(question).toMatchObject({
      callId: expect.any(String),
      turn: 1,
      tool: 'modern__ask_name',
      server: 'modern',
      mode: 'form',
      message: 'What is your name?',
      requestedSchema: expect.objectContaining({ required: ['name'] }),
    });
    expect(question!.expiresAt).toBeUndefined();
    expect((await client.status(id)).phase).toBe('awaiting_input');

    await env.sleep('3 days');
    const described = await handle.describe();
    expect(described.raw.pendingActivities ?? []).toEqual([]);
    expect(await scheduledToolCalls(handle)).toHaveLength(1);
    expect(server.counters.calls.ask_name).toBe(before + 1);
    expect(await client.pendingInputs(id)).toEqual([question]);

    await client.answerInput(id, question!.requestId, { action: 'accept', content: { name: 'Ada' }, by: 'ada' });
    const done = await firstResult(id);
    expect(done.answer).toBe('the tools said: Hello, Ada');
    expect(server.counters.calls.ask_name).toBe(before + 2);
    expect(await scheduledToolCalls(handle)).toHaveLength(2);
    // The wait paused the turn's time limit: three days of waiting is not three days of turn.
    expect(done.stopReason).toBe('completed');
    const types = (await events(handle)).map((event) => event.type);
    expect(types.indexOf('input_requested')).toBeGreaterThan(-1);
    expect(types.indexOf('input_answered')).toBeGreaterThan(types.indexOf('input_requested'));
  });

  it('two concurrent calls each get their own question, and each answer reaches its own call', async () => {
    const { id, handle } = await start('two');
    const pending = await questions(id, 2);
    expect(new Set(pending.map((question) => question.callId)).size).toBe(2);
    const signs = pending.find((question) => question.message === 'Who signs the order?')!;
    const approves = pending.find((question) => question.message === 'Who approves it?')!;
    await client.answerInput(id, approves.requestId, { action: 'accept', content: { name: 'Bob' } });
    await client.answerInput(id, signs.requestId, { action: 'accept', content: { name: 'Ada' } });
    await outcome(handle);
    const messages = await toolMessages(id);
    expect(messages.find((message) => message.role === 'tool' && message.toolCallId === signs.callId)?.content).toBe(
      'Hello, Ada',
    );
    expect(messages.find((message) => message.role === 'tool' && message.toolCallId === approves.callId)?.content).toBe(
      'Hello, Bob',
    );
  });

  it.each(['decline', 'cancel'] as const)('a %s reaches the server as such', async (action) => {
    const { id, handle } = await start('ask');
    const [question] = await questions(id);
    await client.answerInput(id, question!.requestId, { action });
    await outcome(handle);
    expect((await toolMessages(id))[0]?.content).toBe(`No name: ${action}`);
  });

  it('an interrupt answers the question cancel and the call is not sent again', async () => {
    const before = server.counters.calls.ask_name ?? 0;
    const { id, handle } = await start('ask', {}, false);
    const [question] = await questions(id);
    await client.interrupt(id, { reason: 'enough' });
    expect((await firstResult(id)).stopReason).toBe('cancelled');
    expect(server.counters.calls.ask_name).toBe(before + 1);
    expect((await toolMessages(id))[0]).toMatchObject({ outcome: 'cancelled' });
    expect((await toolMessages(id))[0]?.content).toContain(
      "interrupted the turn while this call waited for its server's",
    );
    expect((await events(handle)).find((event) => event.type === 'input_answered')).toMatchObject({
      requestId: question!.requestId,
      action: 'cancel',
      by: 'interrupt',
    });
  });

  it(`a server that asks more than ${MAX_QUESTION_ROUNDS} rounds gets no more answers; the model reads why`, async () => {
    const statesBefore = server.counters.requestStates.length;
    const { id, handle } = await start('forever');
    for (let round = 1; round <= MAX_QUESTION_ROUNDS; round++) {
      const [question] = await questions(id);
      expect(question!.message).toBe(`Round ${round}: anything else?`);
      await client.answerInput(id, question!.requestId, { action: 'accept', content: { answer: `a${round}` } });
      // The next round's question replaces this one; wait until the answer is taken.
      for (let attempt = 0; attempt < 300; attempt++) {
        const [next] = await client.pendingInputs(id);
        if (next?.requestId !== question!.requestId) break;
        await sleep(50);
      }
    }
    const done = await outcome(handle);
    const [message] = await toolMessages(id);
    expect(message).toMatchObject({ outcome: 'error' });
    expect(message?.content).toContain(`asked the person more than ${MAX_QUESTION_ROUNDS} rounds of questions`);
    // Sent 11 times: the first call and one per answered round, each with the state of the round before it.
    const states = server.counters.requestStates.slice(statesBefore);
    expect(states).toEqual([undefined, ...Array.from({ length: MAX_QUESTION_ROUNDS }, (_, i) => `round-${i + 1}`)]);
    expect(done.state.lastResult?.toolCalls).toBe(1);
  });

  it.each(['sampling', 'roots'] as const)('a %s request is refused: the model reads why', async (ask) => {
    // The client declares neither capability, so the SDK server refuses to ask; a server that asks anyway is refused
    // by the activity (test/mcp/input-required.test.ts).
    const { id, handle } = await start(ask);
    await outcome(handle);
    const [message] = await toolMessages(id);
    expect(message).toMatchObject({ outcome: 'error' });
    expect(message?.content).toContain('client capabilities do not declare the required capability');
    expect(await client.pendingInputs(id)).toEqual([]);
  });

  it('a run continues as new only between turns: a waiting question holds the turn, the next run follows it', async () => {
    const { id, handle } = await start('ask', { maxTurnsPerRun: 1 });
    const [question] = await questions(id);
    const firstRun = (await handle.describe()).runId;
    await client.send(id, 'no tools please');
    await env.sleep('1 hour');
    // The second message is queued, the run is at its turn limit, and still it does not hand over mid-turn.
    expect((await handle.describe()).runId).toBe(firstRun);
    expect(await client.pendingInputs(id)).toEqual([question]);
    await client.answerInput(id, question!.requestId, { action: 'accept', content: { name: 'Ada' } });
    const done = await outcome(env.client.workflow.getHandle(handle.workflowId));
    expect(done.state.lastResult?.answer).toBe('no tools for no tools please');
    const transcript = await client.fullTranscript(id);
    expect(transcript.find((message) => message.role === 'tool')?.content).toBe('Hello, Ada');
    expect((await env.client.workflow.getHandle(handle.workflowId).describe()).runId).not.toBe(firstRun);
  });
});
