import { Client, Connection, type ConnectionOptions } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationEndedError, DurableAgentClient } from '../../src/client/index.js';
import { cancellableRetryInterceptor } from '../../src/client/grpc-retry.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { poll, ScriptBook } from './helpers.js';

/**
 * How many calls to Temporal a message costs, counted on the client's connection (every attempt the connection
 * sends, by method). Sending to a conversation, or asking it, is one with-start call in the common case: the
 * conversation is open, or new. Only a conversation whose runs have all closed takes a look (describe) and more.
 */

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let connection: Connection;
let client: DurableAgentClient;
const book = new ScriptBook('round-trips');
const calls: string[] = [];

/** Records the method of every call the connection sends. */
const counting: Interceptor = (options, nextCall) => {
  calls.push(options.method_definition.path.split('/').at(-1) ?? '?');
  // The next interceptor's call is the connection's own; grpc-js types it as the narrower interface.
  return nextCall(options) as ReturnType<Interceptor>;
};

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script: book.script });
  connection = await Connection.connect({
    address: env.address,
    interceptors: [cancellableRetryInterceptor(), counting],
  });
  client = new DurableAgentClient({ client: new Client({ connection }), taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await connection?.close();
  await agent?.close();
  await env?.teardown();
});

/** The calls `action` made, by method, in order. */
async function callsOf(action: () => Promise<unknown>): Promise<string[]> {
  calls.length = 0;
  await action();
  return [...calls];
}

describe('round trips per message', () => {
  it('round trips: send to a new conversation, then to the open one: one call each', async () => {
    const id = book.conversation('send', [{ content: 'One.' }, { content: 'Two.' }]);
    let first: Awaited<ReturnType<DurableAgentClient['send']>> | undefined;
    // Once per client, the first send asks whether the server says if a call started a run (the time-skipping test
    // server does not, and there send looks first so that `created` is right).
    expect(await callsOf(async () => (first = await client.send(id, 'First.')))).toEqual([
      'GetSystemInfo',
      'SignalWithStartWorkflowExecution',
    ]);
    expect(first).toMatchObject({ created: true, reopened: false });
    let second: Awaited<ReturnType<DurableAgentClient['send']>> | undefined;
    expect(await callsOf(async () => (second = await client.send(id, 'Second.')))).toEqual([
      'SignalWithStartWorkflowExecution',
    ]);
    expect(second).toMatchObject({ created: false, reopened: false, runId: first?.runId });
    await poll(
      () => client.status(id),
      (status) => status.turns === 2 && status.phase === 'idle',
    );
    await client.end(id);
  });

  it('round trips: ask a new conversation, then the open one: one call each', async () => {
    const id = book.conversation('ask', [{ content: 'One.' }, { content: 'Two.' }]);
    expect(await callsOf(() => client.ask(id, 'First.'))).toEqual(['ExecuteMultiOperation']);
    let answer: Awaited<ReturnType<DurableAgentClient['ask']>> | undefined;
    expect(await callsOf(async () => (answer = await client.ask(id, 'Second.')))).toEqual(['ExecuteMultiOperation']);
    expect(answer).toMatchObject({ turn: 2, answer: 'Two.' });
    await client.end(id);
  });

  it('round trips: a conversation closed idle is reopened (the refused call, then the look); an ended one refuses', async () => {
    const id = book.conversation('reopen', [{ content: 'One.' }, { content: 'Two.' }, { content: 'Three.' }]);
    await client.ask(id, 'First.', { settings: { idleTimeoutMs: 1_000 } });
    await poll(
      () => client.status(id),
      (status) => !status.open,
    );
    let sent: Awaited<ReturnType<DurableAgentClient['send']>> | undefined;
    const reopenBySend = await callsOf(async () => (sent = await client.send(id, 'Second.')));
    expect(sent).toMatchObject({ created: false, reopened: true });
    expect(reopenBySend[0]).toBe('SignalWithStartWorkflowExecution');
    expect(reopenBySend).toContain('DescribeWorkflowExecution');
    expect(reopenBySend.at(-1)).toBe('SignalWithStartWorkflowExecution');
    await poll(
      () => client.status(id),
      (status) => !status.open,
    );
    const reopenByAsk = await callsOf(() => client.ask(id, 'Third.'));
    expect(reopenByAsk[0]).toBe('ExecuteMultiOperation');
    expect(reopenByAsk.at(-1)).toBe('ExecuteMultiOperation');

    await client.end(id);
    await poll(
      () => client.status(id),
      (status) => !status.open && status.phase === 'ended',
    );
    await expect(client.send(id, 'Anyone?')).rejects.toBeInstanceOf(ConversationEndedError);
    await expect(client.ask(id, 'Anyone?')).rejects.toBeInstanceOf(ConversationEndedError);
    console.info(
      `round trips: reopen by send ${reopenBySend.length} (${reopenBySend.join(', ')}); ` +
        `reopen by ask ${reopenByAsk.length} (${reopenByAsk.join(', ')})`,
    );
  });
});
