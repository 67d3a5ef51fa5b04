import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { utcDay } from '../../src/shared/tenants.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { killAll, startCliWorker } from '../cli/helpers.js';

/**
 * Issue 45: the worker that runs a tenant's conversation is killed (SIGKILL) between a model call and its ledger write.
 * The ledger write is a local activity: it runs in the workflow task that receives the call's result. Worker A runs the
 * conversation, but its one model call slot is held by another conversation's slow call, so worker B makes acme's model
 * call. A is killed while that call is in flight: the call's result is recorded after A died, and the workflow task
 * that writes it to the ledger waits for a worker. B replays the conversation and makes the write. The call was made
 * once and is counted once.
 */

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let directory: string;
let cliEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = await createLocalEnvironment();
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-spend-kill-'));
  model = await startScriptedModel({
    script: (request) => {
      const question = [...request.messages].reverse().find((message) => message.role === 'user');
      const usage = { prompt_tokens: 1000, completion_tokens: 500 };
      // The slow call holds worker A's one model call slot; acme's is long enough to kill A while B makes it.
      return { content: 'noted', usage, delayMs: question?.content === 'slow' ? 120_000 : 3000 };
    },
  });
  const prices = path.join(directory, 'prices.json');
  await fs.writeFile(prices, JSON.stringify({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } }));
  cliEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    DURABLE_AGENT_TASK_QUEUE: 'spend-kill',
    OPENAI_BASE_URL: model.baseUrl,
    DURABLE_AGENT_MODEL: 'scripted-model',
    DURABLE_AGENT_PRICES: prices,
  };
});

afterAll(async () => {
  await killAll();
  await model?.close();
  await env?.teardown();
  if (directory) await fs.rm(directory, { recursive: true, force: true });
});

async function waitFor(what: string, predicate: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The conversation's pending activities; none while it does not exist yet. */
async function pendingActivities(conversationId: string) {
  try {
    const description = await env.client.workflow.getHandle(conversationWorkflowId(conversationId)).describe();
    return description.raw.pendingActivities ?? [];
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return [];
    throw error;
  }
}

/** The text of a marker's details (a local activity's marker names its activity type there). */
function markerText(event: temporal.api.history.v1.IHistoryEvent): string {
  const details = Object.values(event.markerRecordedEventAttributes?.details ?? {});
  const payloads = details.flatMap((detail) => detail.payloads ?? []);
  return payloads.map((payload) => Buffer.from(payload.data ?? []).toString('utf8')).join('\n');
}

/** The workers that ran the workflow tasks which recorded a local activity (the ledger writes) in this history. */
async function ledgerWriters(conversationId: string): Promise<string[]> {
  const history = await env.client.workflow.getHandle(conversationWorkflowId(conversationId)).fetchHistory();
  const events = new Map((history.events ?? []).map((event) => [Number(event.eventId), event]));
  const EventType = temporal.api.enums.v1.EventType;
  return [...events.values()]
    .filter((event) => event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED)
    .filter((event) => event.markerRecordedEventAttributes?.markerName === 'core_local_activity')
    .filter((event) => markerText(event).includes('"recordSpend"'))
    .map((event) => {
      const completed = events.get(Number(event.markerRecordedEventAttributes?.workflowTaskCompletedEventId));
      const started = events.get(Number(completed?.workflowTaskCompletedEventAttributes?.startedEventId));
      return started?.workflowTaskStartedEventAttributes?.identity ?? '';
    });
}

it('spend: the worker of a conversation killed between its model call and the ledger write; made once, counted once', async () => {
  // A takes one model call at a time, and the slow call of another conversation holds it.
  const workerA = await startCliWorker({ ...cliEnv, DURABLE_AGENT_MAX_CONCURRENT_MODEL_CALLS: '1' });
  const client = new DurableAgentClient({ client: env.client, taskQueue: 'spend-kill' });
  void client.send('kill-slow', 'slow');
  await waitFor('the slow model call', async () => Promise.resolve(model.requests.length >= 1));
  const priced = client.ask('kill-1', 'priced', { settings: { tenant: 'acme' } });
  // A ran the conversation's first workflow task; its model call waits in Temporal, unstarted.
  await waitFor('the scheduled model call', async () =>
    (await pendingActivities('kill-1')).some((activity) => activity.activityType?.name === 'callModel'),
  );
  const pending = await pendingActivities('kill-1');
  expect(pending.map((activity) => [activity.activityType?.name, String(activity.state)])).toEqual([
    ['callModel', String(temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED)],
  ]);

  // B makes the call; A dies while it is in flight, before the result and so before the ledger write.
  await startCliWorker(cliEnv);
  await waitFor("acme's model call", async () =>
    Promise.resolve(model.requestsFor(conversationWorkflowId('kill-1')).length >= 1),
  );
  workerA.child.kill('SIGKILL');
  await new Promise((resolve) => workerA.child.once('exit', resolve));

  await priced;
  expect(model.requestsFor(conversationWorkflowId('kill-1'))).toHaveLength(1);
  const writers = await ledgerWriters('kill-1');
  expect(writers).toHaveLength(1);
  expect(writers[0]).not.toMatch(new RegExp(`^${workerA.child.pid}@`));
  const [acme] = await client.spend({ tenant: 'acme', since: utcDay(Date.now()) });
  expect(acme).toMatchObject({ tenant: 'acme', calls: 1, turns: 1, conversations: 1 });
  expect(acme!.usd).toBeCloseTo(0.002, 10);
  // Two worker starts, a sticky workflow task that times out on the dead worker, and a replay: slow on a busy machine.
}, 120_000);
