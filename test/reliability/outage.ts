import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { expect } from 'vitest';
import type { ScriptedModel, ScriptFunction } from '../../src/testing/scripted-model/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import type { ConversationOutcome } from '../../src/workflows/definitions.js';
import { roundOf, STEP_USAGE, toolSummaries } from './chain-model.js';
import {
  activitiesOf,
  historyEvents,
  REPO_ROOT,
  until,
  within,
  WorkerProcess,
  type ActivityRecord,
} from './helpers.js';

/**
 * Issue 15, item 12: the Temporal server stays down longer than the worker's own retries of an activity completion
 * (about 10 s in sdk-core, not configurable; see docs/reliability.md, "Temporal outages"). Two conversations run on
 * the same task queue: in one a model call is in flight (its answer held back {@link ANSWER_DELAY_MS}), in the other a
 * tool call with a side effect (`slow_increment` of effects-server.mjs, {@link EFFECT_DELAY_MS}, neither read-only nor
 * idempotent). The server is killed once both have started, so both finish while it is down. Nothing finished may be
 * lost: the tool runs once and its result (not "outcome unknown") reaches the model, and no model request is made
 * twice. Shared by the fault runs (server-restart.reliability.ts: 5, 15 and 60 s, two workers) and `npm test`
 * (server-outage.test.ts: 15 s, one worker).
 */

export const EFFECTS_SERVER = path.join(REPO_ROOT, 'test/reliability/effects-server.mjs');
/** How long the model holds back the in-flight answer, and how long the in-flight tool call takes. */
export const ANSWER_DELAY_MS = 4_000;
export const EFFECT_DELAY_MS = 3_000;

/** Per conversation (workflow id): how long its tool call takes, and how long its answer is held back. */
const plans = new Map<string, { toolDelayMs: number; answerDelayMs?: number }>();

/** The scripted model of the outage runs: round 1 calls `slow_increment` (keyed by the conversation), round 2 answers. */
export const outageScript: ScriptFunction = (request) => {
  const plan = plans.get(request.conversation) ?? { toolDelayMs: 0 };
  if (roundOf(request) === 1) {
    const args = { key: request.conversation, delayMs: plan.toolDelayMs };
    return { toolCalls: [{ name: 'effects__slow_increment', arguments: args }], usage: STEP_USAGE };
  }
  const answer = { content: `Done. ${toolSummaries(request.messages).join('; ')}.`, usage: STEP_USAGE };
  return plan.answerDelayMs ? { ...answer, delayMs: plan.answerDelayMs, delayAttempts: 1 } : answer;
};

/** What an outage run needs from its test file: the server to kill and restart, a client, the model, a directory. */
export interface OutageEnvironment {
  temporalAddress: string;
  client: Client;
  /** A scripted model running {@link outageScript}. */
  model: ScriptedModel;
  tmp: string;
  killServer(): Promise<void>;
  startServer(): Promise<void>;
  /** Every worker started is added here, for the file's cleanup. */
  workers: WorkerProcess[];
  counterFiles: string[];
}

export interface OutageRun {
  name: string;
  modelRun: string;
  toolRun: string;
  outcomes: ConversationOutcome[];
  /** `slow_increment` calls started and finished (counter file), and finished at the moment of the kill. */
  effects: { calls: number; finished: number };
  finishedAtKill: number;
  /** Idempotency keys of the model requests, per conversation (model run, tool run). */
  requestKeys: (string | null)[][];
  /** The two activities that were in flight: round 2 of the model run, the tool call of the tool run. */
  inFlight: ActivityRecord[];
  delivery: Delivery;
  recoverySeconds: number;
  /** What each worker logged of the results (see {@link workerStory}), for a failure message. */
  story: string;
}

export async function runOutage(
  environment: OutageEnvironment,
  options: { outageMs: number; workerCount: number },
): Promise<OutageRun> {
  const { outageMs, workerCount } = options;
  const { tmp, model } = environment;
  const name = `outage-${outageMs / 1000}s-${workerCount}w`;
  const taskQueue = `${name}-${randomUUID()}`;
  const counterFile = path.join(tmp, `${name}.counter.jsonl`);
  const mcpConfigPath = path.join(tmp, `${name}.mcp.json`);
  environment.counterFiles.push(counterFile);
  const effects = { command: process.execPath, args: [EFFECTS_SERVER], env: { MCP_TEST_COUNTER_FILE: counterFile } };
  writeFileSync(mcpConfigPath, JSON.stringify({ mcpServers: { effects } }, null, 2));
  const logFiles = Array.from({ length: workerCount }, (_, index) => path.join(tmp, `${name}.worker-${index + 1}.log`));
  for (const logFile of logFiles) {
    environment.workers.push(
      await WorkerProcess.start({
        temporalAddress: environment.temporalAddress,
        taskQueue,
        modelBaseUrl: model.baseUrl,
        mcpConfigPath,
        logFile,
      }),
    );
  }
  return await outageTurns(environment, { name, taskQueue, counterFile, logFiles, outageMs });
}

async function outageTurns(
  environment: OutageEnvironment,
  run: { name: string; taskQueue: string; counterFile: string; logFiles: string[]; outageMs: number },
): Promise<OutageRun> {
  const { client, model } = environment;
  const { name, taskQueue, counterFile, logFiles, outageMs } = run;
  const modelRun = `conversation-${name}-model`;
  const toolRun = `conversation-${name}-tool`;
  plans.set(modelRun, { toolDelayMs: 0, answerDelayMs: ANSWER_DELAY_MS });
  plans.set(toolRun, { toolDelayMs: EFFECT_DELAY_MS });
  const handles = await Promise.all(
    [modelRun, toolRun].map((workflowId) =>
      client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
        taskQueue,
        workflowId,
        args: [
          {
            conversationId: workflowId.replace(/^conversation-/, ''),
            messages: [{ id: 'm-1', content: 'Increment the counter.' }],
            closeWhenIdle: true,
          },
        ],
      }),
    ),
  );
  // Both round-1 tool calls have started (the model run's is instant) and the model run's answer is being held.
  await until(
    () =>
      effectEvents(counterFile).calls === 2 && model.requestsFor(modelRun).some((request) => roundOf(request) === 2),
    'the model call and the tool call in flight',
  );
  const killedAt = Date.now();
  await environment.killServer();
  const finishedAtKill = effectEvents(counterFile).finished;
  await sleep(outageMs);
  await environment.startServer();
  const outcomes = await within(
    Promise.all(handles.map((handle) => handle.result())),
    240_000,
    `${name}'s conversations after the restart`,
  );
  const recoverySeconds = (Date.now() - killedAt) / 1000;
  const activities = (
    await Promise.all(handles.map(async (handle) => activitiesOf(await historyEvents(handle))))
  ).flat();
  return {
    name,
    modelRun,
    toolRun,
    outcomes,
    effects: effectEvents(counterFile),
    finishedAtKill,
    requestKeys: [modelRun, toolRun].map((workflowId) =>
      model.requestsFor(workflowId).map((request) => request.idempotencyKey),
    ),
    inFlight: [
      activities.find((activity) => activity.label === 'round-2' && activity.type === 'callModel')!,
      activities.filter((activity) => activity.label === 'slow_increment').at(-1)!,
    ],
    delivery: deliveryOf(logFiles.map((file) => readFileSync(file, 'utf8')).join('\n')),
    recoverySeconds,
    story: logFiles.map((file, index) => `worker ${index + 1}:\n${workerStory(readFileSync(file, 'utf8'))}`).join('\n'),
  };
}

/**
 * The worker's own log lines (time, level, message) with the activity, workflow and attempt they name: which worker
 * kept, handed over, waited for or delivered which result. CI shows a failure's message, not the log files.
 */
function workerStory(log: string): string {
  const lines: string[] = [];
  let entry: string | undefined;
  for (const line of log.split('\n')) {
    const start = /^(\S+Z) \[(INFO|WARN|ERROR)\] (.*?) \{?$/.exec(line);
    if (start) {
      if (/Worker state changed|No Nexus services/.test(start[3]!)) entry = undefined;
      else lines.push((entry = `  ${start[1]!.slice(11)} ${start[2]} ${start[3]}`));
      continue;
    }
    const field = /^\s+(activityType|workflowId|attempt|to|waitedSeconds): '?([^',]*)'?,?$/.exec(line);
    if (entry !== undefined && field) lines[lines.length - 1] += ` · ${field[1]}=${field[2]}`;
  }
  return lines.join('\n');
}

/** Nothing finished was lost: both turns answered with the tool's real result, each tool call and model request once. */
export function expectNothingLost(run: OutageRun): void {
  try {
    expectEachResultOnce(run);
  } catch (error) {
    console.error(`${run.name}: what the workers logged of the results\n${run.story}`);
    throw error;
  }
}

function expectEachResultOnce(run: OutageRun): void {
  // The tool call was still running at the kill (only the model run's instant call had answered).
  expect(run.finishedAtKill).toBe(1);
  for (const [index, workflowId] of [run.modelRun, run.toolRun].entries()) {
    expect(run.outcomes[index]!.state.lastResult, workflowId).toMatchObject({
      stopReason: 'completed',
      answer: `Done. effects__slow_increment: ${workflowId} = 1.`,
      rounds: 2,
      toolCalls: 1,
    });
  }
  // Each conversation's tool call ran exactly once.
  expect(run.effects).toEqual({ calls: 2, finished: 2 });
  for (const [index, keys] of run.requestKeys.entries()) {
    // Two model calls per conversation, each requested once: no finished call was sent to the model again.
    const workflowId = [run.modelRun, run.toolRun][index];
    expect(keys, `${workflowId}'s model requests (idempotency keys)`).toHaveLength(2);
    expect(new Set(keys).size).toBe(2);
  }
}

/** Counter-file events of effects-server.mjs: `call` as a call starts, `finished` as it answers. */
function effectEvents(counterFile: string): { calls: number; finished: number } {
  let text = '';
  try {
    text = readFileSync(counterFile, 'utf8');
  } catch {
    // not written yet
  }
  const events = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { event: string });
  return {
    calls: events.filter((event) => event.event === 'call').length,
    finished: events.filter((event) => event.event === 'finished').length,
  };
}

/** What the workers' logs say about the results that finished during the outage. */
export interface Delivery {
  keptByWorker: number;
  toSameAttempt: number;
  toRetry: number;
  fromCache: number;
  retriesThatWaited: number;
  /** Completions sdk-core gave up on ("Network error while completing activity"). */
  dropped: number;
}

function deliveryOf(log: string): Delivery {
  const count = (text: string) => log.split(text).length - 1;
  return {
    keptByWorker: count('this worker keeps the finished result and delivers it when Temporal is back'),
    toSameAttempt: count("to: 'the same attempt'"),
    toRetry: count("to: 'the retry of the call'"),
    fromCache: count('returning the result this worker kept from an earlier attempt'),
    retriesThatWaited: count('waiting for a result an earlier attempt may have kept'),
    dropped: count('Network error while completing activity'),
  };
}

/** How the results got through, for the results table. */
export function describeDelivery(run: OutageRun): string {
  const { delivery } = run;
  const parts: string[] = [];
  if (delivery.keptByWorker === 0) parts.push('both results were handed to the worker after the restart');
  else {
    parts.push(`${delivery.keptByWorker} result(s) kept by their worker while Temporal did not answer`);
    if (delivery.toSameAttempt) parts.push(`${delivery.toSameAttempt} delivered to the same attempt once it was back`);
    if (delivery.toRetry) {
      parts.push(`${delivery.toRetry} delivered by activity id to the retry (the attempt had timed out meanwhile)`);
    }
    if (delivery.fromCache) parts.push(`${delivery.fromCache} returned by a retry that reached the worker keeping it`);
  }
  if (delivery.retriesThatWaited) parts.push(`${delivery.retriesThatWaited} retry(ies) on the other worker waited`);
  if (delivery.dropped) parts.push(`sdk-core gave up ${delivery.dropped} completion(s)`);
  return parts.join('; ');
}
