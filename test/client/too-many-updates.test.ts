import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConversationEndedError, DurableAgentClient, TooManyUpdatesError } from '../../src/client/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { poll, ScriptBook } from './helpers.js';

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let connection: Connection;
let client: DurableAgentClient;
const book = new ScriptBook('updates');

beforeAll(async () => {
  // One update in flight per workflow instead of Temporal's 10, so the limit is reached with two asks.
  env = await createLocalEnvironment({ extraArgs: ['--dynamic-config-value', 'history.maxInFlightUpdates=1'] });
  agent = await startTestAgent({ env, script: book.script });
  // The Temporal client retries RESOURCE_EXHAUSTED for about half a minute by itself; one attempt keeps the test short.
  connection = await Connection.connect({
    address: env.address,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 1 }))],
  });
  client = new DurableAgentClient({ client: new Client({ connection }), taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await connection?.close();
  await agent?.close();
  await env?.teardown();
});

/** Start an ask whose turn takes a while, and wait until it runs (its update is in flight). */
async function busy(id: string): Promise<{ first: Promise<unknown> }> {
  const first = client.ask(id, 'slow question');
  await poll(
    () => client.status(id),
    (status) => status.phase === 'running',
  );
  // Wrapped: an async function returning the promise itself would wait for it.
  return { first };
}

it("too many updates in flight: onTooManyUpdates 'throw' raises TooManyUpdatesError", async () => {
  const id = book.conversation('throw', [{ content: 'slow answer', delayMs: 3_000 }]);
  const { first } = await busy(id);
  const error = await client.ask(id, 'second', { onTooManyUpdates: 'throw' }).catch((failure: unknown) => failure);
  expect(error).toBeInstanceOf(TooManyUpdatesError);
  expect((error as Error).message).toMatch(/10 updates in flight/);
  expect(await first).toMatchObject({ answer: 'slow answer' });
  expect((await client.status(id)).turns).toBe(1);
});

it('too many updates in flight: by default the message is sent as a signal and its answer awaited', async () => {
  const id = book.conversation('wait', [
    { content: 'slow answer', delayMs: 3_000 },
    { content: 'second answer', delayMs: 1_000 },
  ]);
  const { first } = await busy(id);
  const second = await client.ask(id, 'second', { messageId: 'second-id' });
  expect(second).toMatchObject({ turn: 2, messageId: 'second-id', answer: 'second answer' });
  expect(await first).toMatchObject({ turn: 1, answer: 'slow answer' });
  const transcript = await client.fullTranscript(id);
  expect(transcript.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
    'slow question',
    'second',
  ]);
});

it('too many updates in flight: a message still waiting when the conversation ends fails with ConversationEndedError', async () => {
  const id = book.conversation('ended', [{ content: 'slow answer', delayMs: 3_000 }, { content: 'never asked' }]);
  const { first } = await busy(id);
  const second = client.ask(id, 'second').catch((failure: unknown) => failure);
  // The second message is queued by signal (the fallback) before the end: it is never answered.
  await poll(
    () => client.status(id),
    (status) => status.queued === 1,
  );
  await client.end(id);
  expect(await first).toMatchObject({ answer: 'slow answer' });
  const error = await second;
  expect(error).toBeInstanceOf(ConversationEndedError);
  expect((error as ConversationEndedError).reason).toBe('ended');
});
