import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection, type Worker } from '@temporalio/worker';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpPool } from '../../src/worker/mcp/pool.js';
import { registerSearchAttributes } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { createAgentWorker } from '../../src/worker/agent-worker.js';
import { conversationWorkflow } from '../../src/workflows/conversation.js';
import { conversationWorkflowId, statusQuery, userMessageSignal } from '../../src/workflows/definitions.js';
import { Partition } from '../helpers/partition.js';
import { waitFor } from '../mcp/helpers.js';

/**
 * Workers that reach the Temporal dev server through a relay the test cuts and restores (a network partition).
 *
 * A model call whose attempt Temporal timed out while the worker was still rebuilding the transcript must not send
 * its request: the retry sends its own, and the dead attempt's would be paid for and never used. The worker of the
 * first attempt loses its path (its transcript query waits, its heartbeats do not get through), so Temporal times the
 * attempt out after the model call's 30 s heartbeat timeout and another worker runs the retry.
 *
 * A retry that reaches a worker right after an outage waits for the worker that may hold an earlier attempt's result;
 * lost while it waits, it must not erase the count of failed attempts: `modelAttempts` holds.
 */

let env: TestWorkflowEnvironment;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  env = await createLocalEnvironment();
  await registerSearchAttributes(env);
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await env?.teardown();
});

/** A worker of the project whose model requests carry `x-worker: <name>`; `native` and `client` connect it. */
async function startWorker(
  name: string,
  model: ScriptedModel,
  taskQueue: string,
  connections: { native: NativeConnection; client: Client },
): Promise<Worker> {
  const mcp = new McpPool([]);
  const worker = await createAgentWorker({
    defaultModel: 'scripted-model',
    connection: connections.native,
    namespace: env.namespace ?? 'default',
    taskQueue,
    openai: new OpenAI({
      baseURL: model.baseUrl,
      apiKey: 'test',
      maxRetries: 0,
      defaultHeaders: { 'x-worker': name },
    }),
    temporal: connections.client,
    mcp,
  });
  const running = worker.run();
  cleanups.push(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
    await mcp.close();
  });
  return worker;
}

/**
 * A conversation whose first turn ran on a worker that then stopped, and a second worker (`partitioned`, no copy of the
 * transcript) whose worker connection and client each reach Temporal through a relay. The second message is sent with
 * the client's path held, so that worker's model call waits for its transcript query once it has started.
 */
async function secondTurnWaitingForItsQuery() {
  const model = await startScriptedModel({ script: [{ content: 'First.' }, { content: 'Second.' }] });
  cleanups.push(() => model.close());
  const taskQueue = `dead-attempt-${randomUUID()}`;
  const conversationId = randomUUID();
  const workflowId = conversationWorkflowId(conversationId);
  const direct = { native: env.nativeConnection, client: env.client };

  const first = await startWorker('first', model, taskQueue, direct);
  const handle = await env.client.workflow.start(conversationWorkflow, {
    taskQueue,
    workflowId,
    args: [{ conversationId, messages: [{ id: 'm-1', content: 'One.' }] }],
  });
  await waitFor(async () => (await handle.query(statusQuery)).lastResult?.messageId === 'm-1', 60_000, 'turn 1');
  first.shutdown();
  await waitFor(() => first.getState() === 'STOPPED', 30_000, 'the first worker to stop');

  const workerPath = await Partition.open(env.address);
  const queryPath = await Partition.open(env.address);
  cleanups.push(
    () => workerPath.close(),
    () => queryPath.close(),
  );
  const native = await NativeConnection.connect({ address: workerPath.address });
  const clientConnection = await Connection.connect({ address: queryPath.address });
  cleanups.push(
    () => native.close(),
    () => clientConnection.close(),
  );
  const partitioned = await startWorker('partitioned', model, taskQueue, {
    native,
    client: new Client({ connection: clientConnection, namespace: env.namespace ?? 'default' }),
  });

  queryPath.hold();
  await handle.signal(userMessageSignal, { id: 'm-2', content: 'Two.' });
  await waitFor(
    async () => {
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      return pending.some((activity) => activity.activityType?.name === 'callModel' && Number(activity.state) === 2);
    },
    30_000,
    'the second turn’s model call to start',
  );
  const secondTurn = async () => {
    await waitFor(async () => (await handle.query(statusQuery)).lastResult?.messageId === 'm-2', 60_000, 'turn 2');
    return (await handle.query(statusQuery)).lastResult;
  };
  const workers = () => model.requestsFor(workflowId).map((request) => request.headers['x-worker']);
  return { model, taskQueue, handle, workflowId, direct, workerPath, queryPath, partitioned, secondTurn, workers };
}

/** The attempt on which each `callModel` of the run completed or failed for good (history records only that one). */
async function modelCallFinalAttempts(handle: Awaited<ReturnType<typeof secondTurnWaitingForItsQuery>>['handle']) {
  const events = (await handle.fetchHistory()).events ?? [];
  const modelCalls = new Set(
    events
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
      .map((event) => String(event.eventId)),
  );
  return events
    .filter((event) => modelCalls.has(String(event.activityTaskStartedEventAttributes?.scheduledEventId)))
    .map((event) => event.activityTaskStartedEventAttributes?.attempt ?? 0);
}

// The tests run side by side: each spends most of its time waiting out real heartbeat timeouts and outages, and has
// its own task queue, scripted model and relays.
describe.concurrent('a model call timed out while its transcript is rebuilt', () => {
  it('dead attempt: the attempt Temporal timed out during a slow transcript query sends no request; the retry answers', async () => {
    const run = await secondTurnWaitingForItsQuery();
    // Its heartbeats stop getting through too.
    run.workerPath.cut();

    // Temporal times the attempt out (no heartbeat for 30 s) and another worker runs the retry.
    await startWorker('retry', run.model, run.taskQueue, run.direct);
    await waitFor(() => run.workers().includes('retry'), 90_000, 'the retry’s request');

    // The query's path is back first: the query answers at once, while the worker's heartbeats (which would bring
    // the news that the attempt is over, as a cancellation) still do not get through for a few seconds.
    run.queryPath.restore();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    run.workerPath.restore();
    await waitFor(() => run.partitioned.getStatus().numInFlightActivities === 0, 60_000, 'the dead attempt to end');

    expect(await run.secondTurn()).toMatchObject({ answer: 'Second.', stopReason: 'completed' });
    expect(run.workers()).toEqual(['first', 'retry']);
  }, 240_000);

  it('dead attempt: an attempt whose heartbeats get through stays alive through a query slower than its heartbeat timeout, and sends once', async () => {
    const run = await secondTurnWaitingForItsQuery();
    // Longer than the model call's 30 s heartbeat timeout, counted from its start.
    await new Promise((resolve) => setTimeout(resolve, 35_000));
    run.queryPath.restore();

    expect(await run.secondTurn()).toMatchObject({ answer: 'Second.', stopReason: 'completed' });
    expect(run.workers()).toEqual(['first', 'partitioned']);
    // Turn 1's call, then turn 2's on its first attempt: Temporal never timed it out.
    expect(await modelCallFinalAttempts(run.handle)).toEqual([1, 1]);
  }, 240_000);
});

describe.concurrent('a retry lost while it waits for an earlier attempt’s result', () => {
  it('lost while waiting: error, a retry lost while it waits after an outage, error: modelAttempts: 2 ends the turn', async () => {
    const model = await startScriptedModel({
      script: [{ error: { status: 500 } }, { error: { status: 500 } }, { content: 'Too late.' }],
    });
    cleanups.push(() => model.close());
    const taskQueue = `waiting-retry-${randomUUID()}`;
    const conversationId = randomUUID();
    const workflowId = conversationWorkflowId(conversationId);

    // A worker that saw Temporal unreachable moments ago (its probes go through the relay, retried for up to 10 s).
    const workerPath = await Partition.open(env.address);
    cleanups.push(() => workerPath.close());
    const native = await NativeConnection.connect({ address: workerPath.address });
    cleanups.push(() => native.close());
    const waiting = await startWorker('waiting', model, taskQueue, { native, client: env.client });
    workerPath.down();
    await new Promise((resolve) => setTimeout(resolve, 15_000));
    workerPath.restore();

    const handle = await env.client.workflow.start(conversationWorkflow, {
      taskQueue,
      workflowId,
      args: [{ conversationId, settings: { modelAttempts: 2 }, messages: [{ id: 'm-1', content: 'Go.' }] }],
    });
    // Attempt 1 fails with an error; attempt 2 waits for a holder of an earlier result, heartbeating, and is lost.
    await waitFor(
      async () => {
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        return pending.some((activity) => activity.attempt === 2 && Number(activity.state) === 2);
      },
      30_000,
      'the second attempt to start',
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(model.requestsFor(workflowId)).toHaveLength(1);
    waiting.shutdown();
    await waitFor(() => waiting.getState() === 'STOPPED', 30_000, 'the waiting worker to stop');

    await startWorker('next', model, taskQueue, { native: env.nativeConnection, client: env.client });
    await waitFor(
      async () => (await handle.query(statusQuery)).lastResult?.messageId === 'm-1',
      90_000,
      'the turn to end',
    );
    expect((await handle.query(statusQuery)).lastResult).toMatchObject({
      stopReason: 'error:ModelServerError',
      answer: null,
    });
    expect(model.requestsFor(workflowId).map((request) => request.status)).toEqual([500, 500]);
    // Attempt 3 failed for good: the lost attempt 2 was not counted, and its wait did not erase attempt 1's error.
    expect(await modelCallFinalAttempts(handle)).toEqual([3]);
  }, 240_000);
});
