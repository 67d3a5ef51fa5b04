import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DurableAgentClient,
  InputAlreadyAnsweredError,
  InputRequestNotFoundError,
  InvalidInputError,
} from '../../src/client/index.js';
import { errorMessage } from '../../src/shared/errors.js';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES } from '../../src/shared/search-attributes.js';
import type { ChatMessage } from '../../src/shared/types.js';
import { conversationWorkflowId, startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import type { Script } from '../../src/testing/scripted-model/script.js';
import { pollEventsUpdate, type ConversationStatus } from '../../src/workflows/definitions.js';
import { serveStreamingBridge } from '../../src/bridge/serve.js';
import { httpServer } from '../mcp/helpers.js';
import { pendingActivities } from '../reliability/helpers.js';

/**
 * MCP elicitation end to end on the dev server: our test server's `ask_user` tool asks the person for a name and an
 * age during the call (a 2025-11-25 session: the server is legacy-only, so the question is pushed while the tool
 * activity waits; questions by `input_required` are test/workflows/server-questions.test.ts); the conversation shows the question (status, phase, search attribute, events), a person
 * answers through the client, and the answer reaches the tool's result.
 */

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;
let agent: TestAgent;
let client: DurableAgentClient;

/** Ask the person once, then answer with the tool's result. */
const script: Script = (request) => {
  const last = request.messages.at(-1);
  return last?.role === 'tool'
    ? { content: `the tool said: ${typeof last.content === 'string' ? last.content : ''}` }
    : { toolCalls: [{ name: 'test__ask_user', arguments: { message: 'Who are you?' } }] };
};

beforeAll(async () => {
  env = await createLocalEnvironment();
  mcp = await startTestMcpServer({ transport: 'http', legacyOnly: true });
  agent = await startTestAgent({ env, mcpServers: [httpServer('test', mcp.url)], script });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await mcp?.close();
  await env?.teardown();
});

/** Polls `probe` for 30 s; a timeout says what the conversation looked like, when the wait is about one. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, conversationId?: string): Promise<T> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
  const seen = conversationId === undefined ? '' : `; the conversation then: ${await lookOf(conversationId)}`;
  throw new Error(`timed out waiting for ${what}${seen}`);
}

/**
 * What the conversation looked like, for a failure message: its phase, pending questions, last result, the activities
 * it waits for (a tool call's attempt and heartbeat) and its last events (requested schemas left out).
 */
async function lookOf(conversationId: string): Promise<string> {
  try {
    const { phase, pendingInputs, lastResult } = await client.status(conversationId);
    const activities = await pendingActivities(env.client.workflow.getHandle(conversationWorkflowId(conversationId)));
    const lastEvents = (await events(conversationId)).slice(-10);
    const look = { phase, pendingInputs, lastResult, activities, lastEvents };
    return JSON.stringify(look, (key, value: unknown) => (key === 'requestedSchema' ? undefined : value));
  } catch (error) {
    return `(could not read it: ${errorMessage(error)})`;
  }
}

/** Start a conversation whose first turn calls `ask_user`, and wait for the server's question. */
async function askedConversation(testAgent = agent) {
  const conversationId = randomUUID();
  await testAgent.startConversation(conversationId, { messages: [{ id: 'm1', content: 'hello' }] });
  const status = await until(
    'the question',
    async () => {
      const current = await client.status(conversationId);
      return current.pendingInputs?.length ? current : undefined;
    },
    conversationId,
  );
  return { conversationId, status, request: status.pendingInputs![0]! };
}

async function finished(conversationId: string): Promise<ConversationStatus> {
  return until(
    'the turn result',
    async () => {
      const status = await client.status(conversationId);
      return status.lastResult ? status : undefined;
    },
    conversationId,
  );
}

async function toolMessage(conversationId: string): Promise<ChatMessage | undefined> {
  return (await client.fullTranscript(conversationId)).find((message) => message.role === 'tool');
}

async function events(conversationId: string) {
  const handle = env.client.workflow.getHandle(`conversation-${conversationId}`);
  return (await handle.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] })).events;
}

describe('MCP elicitation through the conversation', () => {
  it('shows the question, refuses invalid content, and an accepted answer reaches the tool result', async () => {
    const { conversationId, status, request } = await askedConversation();
    expect(status.phase).toBe('awaiting_input');
    expect(request).toMatchObject({
      callId: expect.any(String),
      turn: 1,
      tool: 'test__ask_user',
      server: 'test',
      message: 'Who are you?',
      mode: 'form',
      requestedSchema: { type: 'object', required: ['name'] },
    });
    expect(await client.pendingInputs(conversationId)).toEqual([request]);

    // The search attribute says so too: a list of conversations waiting for a person finds it, and only those.
    const handle = env.client.workflow.getHandle(`conversation-${conversationId}`);
    const described = await handle.describe();
    expect(described.typedSearchAttributes.get(DURABLE_AGENT_SEARCH_ATTRIBUTES.status)).toBe('awaiting_input');
    const idleId = randomUUID();
    await agent.startConversation(idleId);
    const listed = await until('the awaiting_input list', async () => {
      const found = await client.list({ status: 'awaiting_input' });
      return found.some((summary) => summary.conversationId === conversationId) ? found : undefined;
    });
    expect(listed.every((summary) => summary.status === 'awaiting_input')).toBe(true);
    expect(listed.map((summary) => summary.conversationId)).not.toContain(idleId);

    // Content that does not fit the requested schema is refused, and nothing changes.
    await expect(
      client.answerInput(conversationId, request.requestId, { action: 'accept', content: { age: -1 } }),
    ).rejects.toThrow(InvalidInputError);
    await expect(
      client.answerInput(conversationId, request.requestId, { action: 'accept', content: { name: 'Ada', x: 1 } }),
    ).rejects.toThrow(/"x" is not a requested field/);
    await expect(client.answerInput(conversationId, 'no-such-request', { action: 'cancel' })).rejects.toThrow(
      InputRequestNotFoundError,
    );
    expect(await client.pendingInputs(conversationId)).toEqual([request]);

    const answer = await client.answerInput(conversationId, request.requestId, {
      action: 'accept',
      content: { name: 'Ada', age: 36 },
      by: 'ada@example.com',
    });
    expect(answer).toEqual({
      requestId: request.requestId,
      action: 'accept',
      content: { name: 'Ada', age: 36 },
      by: 'ada@example.com',
    });
    await expect(client.answerInput(conversationId, request.requestId, { action: 'decline' })).rejects.toThrow(
      InputAlreadyAnsweredError,
    );

    const done = await finished(conversationId);
    expect(done.lastResult).toMatchObject({ stopReason: 'completed' });
    expect(done.lastResult?.answer).toBe('the tool said: accept {"name":"Ada","age":36}');
    expect(done.pendingInputs).toBeUndefined();
    expect((await toolMessage(conversationId))?.content).toBe('accept {"name":"Ada","age":36}');

    const types = (await events(conversationId)).map((event) => event.type);
    expect(types).toEqual(expect.arrayContaining(['input_requested', 'input_answered']));
    expect(types.indexOf('input_requested')).toBeLessThan(types.indexOf('input_answered'));
    expect((await events(conversationId)).find((event) => event.type === 'input_answered')).toMatchObject({
      requestId: request.requestId,
      action: 'accept',
      by: 'ada@example.com',
      turn: 1,
    });
  });

  it.each(['decline', 'cancel'] as const)('a %s reaches the server as such', async (action) => {
    const { conversationId, request } = await askedConversation();
    await expect(
      client.answerInput(conversationId, request.requestId, { action, content: { name: 'Ada' } }),
    ).rejects.toThrow(InvalidInputError);
    await client.answerInput(conversationId, request.requestId, { action });
    const done = await finished(conversationId);
    expect(done.lastResult?.answer).toBe(`the tool said: ${action}`);
    expect((await toolMessage(conversationId))?.content).toBe(action);
  });

  it('an interrupt cancels the pending question', async () => {
    const { conversationId, request } = await askedConversation();
    await client.interrupt(conversationId, { reason: 'enough' });
    const done = await finished(conversationId);
    expect(done.lastResult?.stopReason).toBe('cancelled');
    expect(done.pendingInputs).toBeUndefined();
    expect((await events(conversationId)).find((event) => event.type === 'input_answered')).toMatchObject({
      requestId: request.requestId,
      action: 'cancel',
      by: 'interrupt',
    });
  });

  it("a question nobody answers is cancelled when the server's elicitationTimeoutMs runs out", async () => {
    const bounded = await startTestAgent({
      env,
      mcpServers: [httpServer('test', mcp.url, { elicitationTimeoutMs: 1_500 })],
      script,
    });
    try {
      const { conversationId, request } = await askedConversation(bounded);
      expect(Date.parse(request.expiresAt!) - Date.parse(request.requestedAt)).toBeLessThanOrEqual(1_500);
      const done = await finished(conversationId);
      expect(done.lastResult?.answer).toBe('the tool said: cancel');
      expect((await events(conversationId)).find((event) => event.type === 'input_answered')).toMatchObject({
        requestId: request.requestId,
        action: 'cancel',
        by: 'timeout',
      });
      await expect(client.answerInput(conversationId, request.requestId, { action: 'decline' })).rejects.toThrow(
        InputAlreadyAnsweredError,
      );
    } finally {
      await bounded.close();
    }
  });

  it("neither the call's own timeoutMs nor the activity's start-to-close runs out while the person answers", async () => {
    // 800 ms for the call, but the person takes longer: the wait counts neither against the call's timeout nor
    // against the activity's start-to-close timeout (800 ms + 10 s without the elicitation bound added).
    const quick = await startTestAgent({
      env,
      mcpServers: [httpServer('test', mcp.url, { timeoutMs: 800 })],
      script,
    });
    try {
      const { conversationId, request } = await askedConversation(quick);
      await sleep(12_000);
      await client.answerInput(conversationId, request.requestId, { action: 'accept', content: { name: 'Bob' } });
      const done = await finished(conversationId);
      expect(done.lastResult?.answer).toBe('the tool said: accept {"name":"Bob"}');
    } finally {
      await quick.close();
    }
  });

  it('the HTTP bridge answers: 400 for a bad body or content, 404 unknown, 200, then 409', async () => {
    const { conversationId, request } = await askedConversation();
    await using served = await serveStreamingBridge({ agent: client });
    const post = async (requestId: string, body: unknown) => {
      const response = await fetch(
        `${served.url}/conversations/${conversationId}/inputs/${encodeURIComponent(requestId)}`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        },
      );
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await post(request.requestId, 'not json')).toMatchObject({
      status: 400,
      body: { error: { type: 'InvalidBody' } },
    });
    expect(await post(request.requestId, { action: 'maybe' })).toMatchObject({
      status: 400,
      body: { error: { type: 'InvalidBody' } },
    });
    expect(await post(request.requestId, { action: 'accept', content: { name: '' } })).toMatchObject({
      status: 400,
      body: { error: { type: 'InvalidInputError', message: expect.stringContaining('"name" must be at least 1') } },
    });
    expect(await post('no-such-request', { action: 'cancel' })).toMatchObject({
      status: 404,
      body: { error: { type: 'InputRequestNotFoundError' } },
    });
    expect(await post(request.requestId, { action: 'accept', content: { name: 'Cy' }, by: 'web' })).toEqual({
      status: 200,
      body: { requestId: request.requestId, action: 'accept', content: { name: 'Cy' }, by: 'web' },
    });
    expect(await post(request.requestId, { action: 'decline' })).toMatchObject({
      status: 409,
      body: { error: { type: 'InputAlreadyAnsweredError' } },
    });
    expect((await finished(conversationId)).lastResult?.answer).toBe('the tool said: accept {"name":"Cy"}');
  });

  it('a worker that stops while the server waits: the retried call asks again, the old question is cancelled', async () => {
    const taskQueue = `elicitation-${randomUUID()}`;
    const mcpServers = [httpServer('test', mcp.url)];
    const first = await startTestAgent({ env, mcpServers, script, taskQueue });
    let second: TestAgent | undefined;
    try {
      const { conversationId, request } = await askedConversation(first);
      // The MCP request dies with the worker's attempt; the question it asked has nobody waiting for it any more.
      await first.close();
      second = await startTestAgent({ env, mcpServers, script, taskQueue });
      const retried = await until(
        'the retried question',
        async () => {
          const [pending] = await client.pendingInputs(conversationId);
          return pending !== undefined && pending.requestId !== request.requestId ? pending : undefined;
        },
        conversationId,
      );
      // ask_user is read-only, so the retry calls it again and the server asks again.
      expect(retried).toMatchObject({ requestId: `${request.callId}:2:1`, callId: request.callId });
      await client.answerInput(conversationId, retried.requestId, { action: 'accept', content: { name: 'Dee' } });
      expect((await finished(conversationId)).lastResult?.answer).toBe('the tool said: accept {"name":"Dee"}');
      const answered = (await events(conversationId)).filter((event) => event.type === 'input_answered');
      expect(answered).toMatchObject([
        { requestId: request.requestId, action: 'cancel', by: 'retried' },
        { requestId: retried.requestId, action: 'accept' },
      ]);
    } finally {
      await first.close();
      await second?.close();
    }
  });
});
