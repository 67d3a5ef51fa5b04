import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  type WorkflowClientInterceptor,
} from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { ConversationEndedError, DurableAgentClient } from '../../src/client/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { conversationWorkflowId, statusQuery, type TurnResult } from '../../src/workflows/definitions.js';
import { poll, ScriptBook } from './helpers.js';

/*
 * Temporal answers a query to a running run only between its workflow tasks: while a task is due, it holds the query
 * (one at a time, on the dev server) and refuses any other at once ("consistent query buffer is full",
 * RESOURCE_EXHAUSTED). A run closed while a query waits never answers it: the query fails at the server's query
 * timeout (30 s). Each test makes that window last: its conversation's task queue has no worker until the test starts
 * one, so the run's workflow task stays due and a first query stays held.
 */

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let connection: Connection;
const book = new ScriptBook('queries');
const agents: TestAgent[] = [];
/** Queries the client under test made, and those Temporal refused for the moment (`queryRun` sends them again). */
const queries = { sent: 0, refused: 0 };

beforeAll(async () => {
  // One update in flight per workflow instead of Temporal's 10, so two asks reach the limit.
  env = await createLocalEnvironment({ extraArgs: ['--dynamic-config-value', 'history.maxInFlightUpdates=1'] });
  model = await startScriptedModel({ script: book.script });
  // A client that sees RESOURCE_EXHAUSTED at once (the SDK's interceptor would retry it for a while), as a backend
  // that wants the too-many-updates fallback without delay configures it.
  connection = await Connection.connect({
    address: env.address,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 1 }))],
  });
});

afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

afterAll(async () => {
  await connection?.close();
  await model?.close();
  await env?.teardown();
});

const counting: WorkflowClientInterceptor = {
  async query(input, next) {
    queries.sent++;
    try {
      return await next(input);
    } catch (error) {
      // Refused for the moment: another query is held, or the held one was dropped with the server's copy of the run
      // (an update-with-start the server refused or aborted makes it drop that copy, and whichever query it held).
      if (/consistent query buffer is full|buffered query cleared/.test(String((error as Error).cause)))
        queries.refused++;
      throw error;
    }
  },
};

/** A client of a task queue no worker polls until the test starts one (and may stop it again). */
function withoutWorker(): {
  client: DurableAgentClient;
  raw: Client;
  startWorker: () => Promise<void>;
  stopWorker: () => Promise<void>;
} {
  const taskQueue = `test-${randomUUID()}`;
  const raw = new Client({ connection, interceptors: { workflow: [counting] } });
  queries.sent = 0;
  queries.refused = 0;
  const startWorker = async () => {
    agents.push(await startTestAgent({ env, model, taskQueue }));
  };
  const stopWorker = async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.close()));
  };
  return { client: new DurableAgentClient({ client: raw, taskQueue }), raw, startWorker, stopWorker };
}

/** Hold one query on the conversation's run (its workflow task is due): Temporal now refuses any other query. */
async function holdQuery(id: string): Promise<{ held: Promise<unknown> }> {
  const uncounted = new Client({ connection });
  const handle = uncounted.workflow.getHandle(conversationWorkflowId(id));
  let probe = '';
  for (let attempt = 1; attempt <= 5; attempt++) {
    const held = handle.query(statusQuery).catch((error: unknown) => error);
    await sleep(300);
    // A probe that came first would be the one held: it gives up after a while, and the hold starts again.
    probe = await uncounted
      .withDeadline(Date.now() + 2_000, () => handle.query(statusQuery))
      .then(
        () => 'answered',
        (error: unknown) => String((error as Error).cause),
      );
    // Wrapped: an async function returning the promise itself would wait for it.
    if (/consistent query buffer is full/.test(probe)) return { held };
  }
  throw new Error(`no query could be held on ${id}; the last probe: ${probe}`);
}

/**
 * Two asks at once while a query is held: one update is in flight (it waits for a worker), so the other is sent by
 * signal and polls the status, which Temporal refuses. Resolves once it did.
 */
async function twoAsksWhileHeld(
  client: DurableAgentClient,
  id: string,
): Promise<{ held: Promise<unknown>; asks: Promise<unknown>[] }> {
  await client.start(id);
  const { held } = await holdQuery(id);
  const asks = ['one', 'two'].map((name) =>
    client.ask(id, `question ${name}`, { messageId: `${name}-id` }).catch((error: unknown) => error),
  );
  await poll(
    async () => queries.refused,
    (refused) => refused >= 1,
  );
  return { held, asks };
}

it('run queries: an ask sent by signal waits out a query Temporal refuses while another waits, and gets its answer', async () => {
  const { client, startWorker } = withoutWorker();
  const id = book.conversation('busy-answer', [{ content: 'first answer' }, { content: 'second answer' }]);
  const { held, asks } = await twoAsksWhileHeld(client, id);
  await startWorker();
  const results = await Promise.all(asks);
  expect(results).toMatchObject([{ messageId: 'one-id' }, { messageId: 'two-id' }]);
  expect((results as TurnResult[]).map((result) => result.answer).sort()).toEqual(['first answer', 'second answer']);
  await held;
});

it('run queries: an ask sent by signal that still waits when the conversation ends fails with ConversationEndedError', async () => {
  const { client, startWorker } = withoutWorker();
  const id = book.conversation('busy-ended', [{ content: 'never asked' }]);
  const { held, asks } = await twoAsksWhileHeld(client, id);
  await client.end(id);
  await startWorker();
  for (const outcome of await Promise.all(asks)) {
    expect(outcome).toBeInstanceOf(ConversationEndedError);
    expect((outcome as ConversationEndedError).reason).toBe('ended');
  }
  await held;
});

it('run queries: status and fullTranscript wait out a query Temporal refuses while another waits', async () => {
  const { client, startWorker } = withoutWorker();
  const id = book.conversation('busy-reads');
  await client.start(id);
  const { held } = await holdQuery(id);
  const status = client.status(id).catch((error: unknown) => error);
  const transcript = client.fullTranscript(id).catch((error: unknown) => error);
  await poll(
    async () => queries.refused,
    (refused) => refused >= 2,
  );
  await startWorker();
  expect(await status).toMatchObject({ open: true, phase: 'idle', turns: 0, queued: 0 });
  expect(await transcript).toEqual([]);
  await held;
});

it('run queries: a status query the run closes under is answered from the closed run, not after the query timeout', async () => {
  const { client, raw, startWorker, stopWorker } = withoutWorker();
  const id = book.conversation('closing');
  await startWorker();
  await client.start(id);
  await poll(
    () => client.status(id),
    (status) => status.phase === 'idle',
  );
  await stopWorker();
  // A signal makes the run's next workflow task due, and no worker takes it: a query now waits for it.
  await client.interrupt(id);
  const sentBefore = queries.sent;
  const startedAt = Date.now();
  const status = client.status(id).catch((error: unknown) => error);
  await poll(
    async () => queries.sent,
    (sent) => sent > sentBefore,
    { intervalMs: 20 },
  );
  // The run closes first, so that task never runs and the query is never answered by it.
  await raw.workflow.getHandle(conversationWorkflowId(id)).terminate('closed while a query waits');
  await startWorker();
  expect(await status).toMatchObject({ open: false, phase: 'ended' });
  // The server's query timeout is 30 s: an answer well before it came from a query sent again to the closed run.
  expect(Date.now() - startedAt).toBeLessThan(20_000);
});
