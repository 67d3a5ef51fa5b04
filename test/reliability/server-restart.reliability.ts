import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/temporal-servers/ports.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { expectValidToolPairing } from '../helpers/transcript.js';
import {
  CHAIN_ANSWER,
  CHAIN_CALLS,
  CHAIN_ROUNDS,
  CHAIN_TOOL_CALLS,
  chainScript,
  roundOf,
  SLOW_MS,
} from './chain-model.js';
import {
  activitiesOf,
  callsPerTool,
  DevServerProcess,
  historyEvents,
  keepLogsAndRemove,
  killLeftovers,
  requireBuild,
  ResultRows,
  until,
  within,
  WorkerProcess,
  writeMcpConfig,
} from './helpers.js';
import {
  ANSWER_DELAY_MS,
  describeDelivery,
  EFFECT_DELAY_MS,
  expectNothingLost,
  outageScript,
  runOutage,
} from './outage.js';

/**
 * Issue 8, item 2: the Temporal server itself dies in the middle of a turn. A dev server keeps its state in a SQLite
 * file; it is killed with SIGKILL, stays down for a few seconds, and is started again on the same file and port. The
 * worker process and the client are the ones from before the crash: they must reconnect by themselves, and the turn
 * must complete with the answer and counts of an uninterrupted chain (test/reliability/worker-crash.reliability.ts
 * runs that baseline; chain-model.ts states it). Issue 15, item 12: the same server then stays down 5, 15 and 60 s
 * while a model call and a side-effecting tool call finish (outage.ts), and nothing finished may be lost.
 */

/** How long the server stays down: longer than the slow tool, so that call finishes while nobody can record it. */
const OUTAGE_MS = 5_000;
const GROUP = 'Temporal server killed (SIGKILL) and restarted on its database file';

let tmp: string;
let port: number;
let dbFile: string;
let serverLog: string;
let server: DevServerProcess | undefined;
let connection: Connection;
let client: Client;
let model: ScriptedModel;
let outageModel: ScriptedModel;
const workers: WorkerProcess[] = [];
const counterFiles: string[] = [];
const delays = new Map<string, Map<number, number>>();
const rows = new ResultRows('server-restart');

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-restart-'));
  port = await findFreePort();
  dbFile = path.join(tmp, 'temporal.sqlite');
  serverLog = path.join(tmp, 'server.log');
  server = await DevServerProcess.start({ port, dbFile, logFile: serverLog });
  connection = await Connection.connect({ address: `127.0.0.1:${port}` });
  client = new Client({ connection });
  model = await startScriptedModel({ script: chainScript(delays), name: 'the order chain' });
  outageModel = await startScriptedModel({ script: outageScript, name: 'the outage runs' });
});

afterAll(async () => {
  rows.write();
  await Promise.allSettled(workers.map((worker) => worker.kill()));
  await connection?.close();
  await server?.kill();
  killLeftovers(counterFiles);
  await model?.close();
  await outageModel?.close();
  // The logs of the workers and the server say what happened to each result.
  if (tmp) keepLogsAndRemove(tmp, 'server-restart');
});

interface Restart {
  fault: string;
  delays?: Record<number, number>;
  /**
   * Activities (labels) that may be in flight at the kill, all safe to repeat. The server cannot be asked what ran at
   * the moment it dies, so this is the step the kill aims at: its calls may need another attempt, and a read-only tool
   * among them may run once more.
   */
  inFlight: string[];
  killWhen(workflowId: string, counterFile: string): Promise<void>;
}

const restarts: Record<string, Restart> = {
  'tool-in-flight': {
    fault: `while a read-only tool call is in flight (slow, ${SLOW_MS / 1000} s); down ${OUTAGE_MS / 1000} s, so the call finishes during the outage`,
    inFlight: ['slow', 'echo'], // the parallel pair of step 3
    async killWhen(_workflowId, counterFile) {
      await until(() => (callsPerTool(counterFile).slow ?? 0) >= 1, 'the slow call');
    },
  },
  'model-in-flight': {
    fault: `while a model call is in flight (round 4, answer held back 3 s); down ${OUTAGE_MS / 1000} s`,
    delays: { 4: 3_000 },
    inFlight: ['round-4'],
    async killWhen(workflowId) {
      await until(() => model.requestsFor(workflowId).some((request) => roundOf(request) === 4), 'round 4');
    },
  },
};

describe('the Temporal server dies in the middle of a turn', () => {
  it.each(Object.keys(restarts))(
    'server restart (%s): the same worker and client reconnect and the turn completes like an uninterrupted one',
    async (name) => {
      const restart = restarts[name]!;
      const conversationId = `restart-${name}`;
      const workflowId = `conversation-${conversationId}`;
      if (restart.delays) {
        delays.set(workflowId, new Map(Object.entries(restart.delays).map(([round, ms]) => [Number(round), ms])));
      }
      const order = rows.slot();
      try {
        // A worker of its own (own task queue, own MCP server processes and counter file) for each run.
        const taskQueue = `restart-${name}-${randomUUID()}`;
        const counterFile = path.join(tmp, `${name}.counter.jsonl`);
        const mcpConfigPath = path.join(tmp, `${name}.mcp.json`);
        counterFiles.push(counterFile);
        writeMcpConfig(mcpConfigPath, counterFile);
        const worker = await WorkerProcess.start({
          temporalAddress: `127.0.0.1:${port}`,
          taskQueue,
          modelBaseUrl: model.baseUrl,
          mcpConfigPath,
          logFile: path.join(tmp, `${name}.worker.log`),
        });
        workers.push(worker);
        const handle = await client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
          taskQueue,
          workflowId,
          args: [{ conversationId, messages: [{ id: 'm-1', content: 'Run the order chain.' }], closeWhenIdle: true }],
        });
        await restart.killWhen(workflowId, counterFile);
        const killedAt = Date.now();
        await server!.kill();
        server = undefined;
        await sleep(OUTAGE_MS);
        server = await DevServerProcess.start({ port, dbFile, logFile: serverLog });
        const outcome = await within(handle.result(), 180_000, `${workflowId} after the restart`);
        const recoverySeconds = (Date.now() - killedAt) / 1000;

        const turn = outcome.state.lastResult!;
        expect(turn).toMatchObject({
          stopReason: 'completed',
          answer: CHAIN_ANSWER,
          rounds: CHAIN_ROUNDS,
          toolCalls: CHAIN_TOOL_CALLS,
        });
        // The worker process from before the crash finished the turn: it was never restarted.
        expect(worker.alive()).toBe(true);
        const calls = callsPerTool(counterFile);
        const runs = Object.fromEntries(Object.keys(CHAIN_CALLS).map((tool) => [tool, calls[tool] ?? 0]));
        for (const [tool, expected] of Object.entries(CHAIN_CALLS)) {
          const allowed = restart.inFlight.includes(tool) ? 1 : 0;
          expect(runs[tool], tool).toBeGreaterThanOrEqual(expected);
          expect(runs[tool], tool).toBeLessThanOrEqual(expected + allowed);
        }
        const requests = model.requestsFor(workflowId);
        for (const request of requests) expectValidToolPairing(request.messages);
        const activities = activitiesOf(await historyEvents(handle));
        const retried = activities.filter((activity) => (activity.attempt ?? 1) > 1);
        // Only the call in flight may have needed another attempt.
        expect(retried.map((activity) => activity.label).filter((label) => !restart.inFlight.includes(label))).toEqual(
          [],
        );

        const extra = Object.entries(runs)
          .filter(([tool, count]) => count !== CHAIN_CALLS[tool])
          .map(([tool, count]) => `${tool} ${count} (uninterrupted ${CHAIN_CALLS[tool]})`);
        rows.add(
          {
            group: GROUP,
            fault: restart.fault,
            outcome:
              'completed with the uninterrupted answer; the same worker process and client reconnected by themselves; ' +
              (retried.length === 0
                ? `the worker kept the results of ${restart.inFlight.join(' and ')} through the outage and delivered them to the restarted server; nothing retried`
                : `${retried.map((activity) => `${activity.label} needed attempt ${activity.attempt}`).join(', ')} after the restart`),
            counts:
              `rounds ${turn.rounds}, tool calls ${turn.toolCalls}, tokens ${turn.usage.totalTokens} (all = uninterrupted) · ` +
              `tool runs: ${extra.length === 0 ? 'each = uninterrupted' : extra.join(', ')} · ` +
              `model requests ${requests.length} · retried: ${retried.map((activity) => `${activity.label} (attempt ${activity.attempt})`).join(', ') || 'none'}`,
            recoverySeconds,
            passed: true,
          },
          order,
        );
      } catch (error) {
        rows.add(
          {
            group: GROUP,
            fault: restart.fault,
            outcome: `FAILED: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
            counts: '',
            passed: false,
          },
          order,
        );
        throw error;
      }
    },
    300_000,
  );
});

/**
 * Outages in seconds (see outage.ts), each with two workers on the task queue, as in the deployment where results were
 * lost, so a retry may reach the worker that does not hold the result. `OUTAGE_SECONDS=120,300` runs other lengths
 * (outside CI, to find the limit); `OUTAGE_WORKERS=1` runs them with one worker.
 */
const OUTAGES = (process.env.OUTAGE_SECONDS ?? '5,15,60').split(',').map((seconds) => ({
  outageMs: Number(seconds) * 1000,
  workerCount: Number(process.env.OUTAGE_WORKERS ?? 2),
}));
const OUTAGE_GROUP = 'Temporal server down 5, 15 and 60 s while a model call and a side-effecting tool call run';

describe('the Temporal server stays down longer than the worker retries a completion', () => {
  it.each(OUTAGES)(
    'down $outageMs ms ($workerCount worker(s)) while a model call and a side-effecting tool call run: both results reach the workflow, nothing runs twice',
    async ({ outageMs, workerCount }) => {
      const fault =
        `down ${outageMs / 1000} s (${workerCount === 1 ? 'one worker' : `${workerCount} workers`}), killed while a ` +
        `model call (answer held back ${ANSWER_DELAY_MS / 1000} s) and a tool call with a side effect ` +
        `(slow_increment, ${EFFECT_DELAY_MS / 1000} s, not idempotent) ran in two conversations`;
      const order = rows.slot();
      try {
        const run = await runOutage(
          {
            temporalAddress: `127.0.0.1:${port}`,
            client,
            model: outageModel,
            tmp,
            killServer: async () => {
              await server!.kill();
              server = undefined;
            },
            startServer: async () => {
              server = await DevServerProcess.start({ port, dbFile, logFile: serverLog });
            },
            workers,
            counterFiles,
          },
          { outageMs, workerCount },
        );
        expectNothingLost(run);
        rows.add(
          {
            group: OUTAGE_GROUP,
            fault,
            outcome:
              'both turns completed; slow_increment ran once per conversation and its result reached the model; ' +
              `no model request was repeated; ${describeDelivery(run)}`,
            counts:
              `slow_increment runs 2 (1 per conversation) · model requests ${run.requestKeys.flat().length} (2 per ` +
              `conversation, none repeated) · attempts: ${run.inFlight.map((activity) => `${activity.label} ${activity.attempt ?? 1}`).join(', ')}`,
            recoverySeconds: run.recoverySeconds,
            passed: true,
          },
          order,
        );
      } catch (error) {
        rows.add(
          {
            group: OUTAGE_GROUP,
            fault,
            outcome: `FAILED: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
            counts: '',
            passed: false,
          },
          order,
        );
        throw error;
      }
    },
    Math.max(...OUTAGES.map(({ outageMs }) => outageMs)) + 240_000,
  );
});
