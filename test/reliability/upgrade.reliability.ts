import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import {
  startScriptedModel,
  type ScriptedModel,
  type ScriptStep,
  type StepFunction,
} from '../../src/testing/scripted-model/index.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import {
  callsPerTool,
  keepLogsAndRemove,
  killLeftovers,
  requireBuild,
  ResultRows,
  TEST_SERVER,
  within,
  WorkerProcess,
} from './helpers.js';
import { buildRelease, releasesToUpgradeFrom, type Release } from './release-build.js';
import {
  nextAnswer,
  reachState,
  scriptOf,
  HeldAnswer,
  statusWhen,
  upgradeStates,
  type Reached,
  type StateContext,
  type UpgradeState,
} from './upgrade-states.js';

/**
 * In-place upgrade: the worker of an earlier release is replaced by today's, as a deploy does it (`docker compose up`
 * with a new image): the old process gets SIGTERM and exits, the new one starts on the same task queue. Conversations
 * the old worker left idle, mid-model-call, mid-tool-call, awaiting approval and awaiting an answer to a server's
 * question must all go on under today's workflow code: each finishes its turn with the right answer, answers its next
 * message, runs its tools the right number of times, and no workflow task fails (a history that does not replay on
 * today's code fails its workflow tasks with `[TMPRL1100] Nondeterminism error` and the conversation is stuck).
 *
 * The old workers are every release in releases.json, each built from its recorded commit (release-build.ts).
 * `DURABLE_AGENT_UPGRADE_FROM=<commit>` runs another commit instead, e.g. dd0e1a7, whose histories do not replay on
 * 0.1.0's code, to see this run fail; it is not for CI.
 */

const releases = releasesToUpgradeFrom();
const rows = new ResultRows('upgrade');
/** How long the deploy waits for the old worker to exit before it kills it: `docker compose`'s default. */
const DEPLOY_GRACE_MS = 10_000;
/** Each wait for a conversation after the upgrade; a history that does not replay never gets there. */
const AFTER_UPGRADE_MS = 90_000;

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let tmp: string;
const builds = new Map<string, string>();
const workers: WorkerProcess[] = [];
const counterFiles: string[] = [];
/** The model's steps per conversation (workflow id). */
const scripts = new Map<string, (ScriptStep | StepFunction)[]>();

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-upgrade-'));
  // One at a time: a cold build installs and compiles, and the machine's cores are shared.
  for (const release of releases) builds.set(release.commit, await buildRelease(release));
  env = await createLocalEnvironment();
  model = await startScriptedModel({
    name: 'the upgrade run',
    script: async (request, { stepIndex }) => {
      const step = scripts.get(request.conversation)?.[stepIndex];
      return typeof step === 'function' ? await step(request) : step;
    },
  });
}, 900_000);

afterAll(async () => {
  rows.write();
  await Promise.allSettled([...workers.map((worker) => worker.kill()), model?.close()]);
  killLeftovers(counterFiles);
  await env?.teardown();
  // The workers' logs say what each did with the histories.
  if (tmp) keepLogsAndRemove(tmp, 'upgrade');
});

interface Conversation {
  state: UpgradeState;
  context: StateContext;
  /** Its row's place in the table. */
  order: number;
}

/** Failed workflow tasks in every run of every workflow on the task queue, with the first failure's message. */
async function failedWorkflowTasks(client: Client, taskQueue: string) {
  const perWorkflow = new Map<string, number>();
  const listed = new Set<string>();
  let histories = 0;
  let firstFailure: string | undefined;
  for await (const execution of client.workflow.list({ query: `TaskQueue = "${taskQueue}"` })) {
    histories += 1;
    listed.add(execution.workflowId);
    const { events } = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    for (const event of events ?? []) {
      const failed = event.workflowTaskFailedEventAttributes;
      if (!failed) continue;
      perWorkflow.set(execution.workflowId, (perWorkflow.get(execution.workflowId) ?? 0) + 1);
      firstFailure ??= failed.failure?.message ?? String(failed.cause);
    }
  }
  const runningQuery = `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"`;
  // Visibility trails the histories by a moment: a run that just closed may still be listed as running.
  let running = (await client.workflow.count(runningQuery)).count;
  for (let attempt = 0; running > 0 && attempt < 20; attempt++) {
    await sleep(250);
    running = (await client.workflow.count(runningQuery)).count;
  }
  return { perWorkflow, listed, histories, firstFailure, running };
}

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0];

describe.each(releases)('in-place upgrade from $version', (release: Release) => {
  const slug = release.version.replace(/[^0-9a-z.]+/gi, '-');
  const group = `In-place upgrade: the worker of ${release.version} (${release.commit.slice(0, 7)}) stopped (SIGTERM), today's started on its task queue`;

  it("conversations left idle, mid-model-call, mid-tool-call, awaiting approval and awaiting an answer all go on under today's worker", async () => {
    const taskQueue = `upgrade-${slug}`;
    const client = new DurableAgentClient({ client: env.client, taskQueue });
    const held = new HeldAnswer();
    const mcpServers: Record<string, unknown> = {};
    const conversations: Conversation[] = upgradeStates(held).map((state) => {
      const counterFile = path.join(tmp, `${slug}-${state.name}.counter.jsonl`);
      counterFiles.push(counterFile);
      mcpServers[state.name] = {
        command: process.execPath,
        // Legacy-only: every release's worker speaks 2025-11-25 to it, so the question in flight is the same kind.
        args: [TEST_SERVER, '--legacy-only'],
        env: { MCP_TEST_COUNTER_FILE: counterFile },
      };
      const conversationId = `upgrade-${slug}-${state.name}`;
      scripts.set(conversationWorkflowId(conversationId), scriptOf(state));
      return { state, context: { client, conversationId, counterFile }, order: rows.slot() };
    });
    const mcpConfigPath = path.join(tmp, `${slug}.mcp.json`);
    writeFileSync(mcpConfigPath, JSON.stringify({ mcpServers }, null, 2));
    const startWorker = async (which: 'old' | 'new', cli?: string) => {
      const worker = await WorkerProcess.start({
        temporalAddress: env.address,
        taskQueue,
        modelBaseUrl: model.baseUrl,
        mcpConfigPath,
        logFile: path.join(tmp, `${slug}.${which}-worker.log`),
        cli,
      });
      workers.push(worker);
      return worker;
    };

    // The old release's worker brings every conversation into its state, concurrently.
    const old = await startWorker('old', path.join(builds.get(release.commit)!, 'dist/cli/index.js'));
    const reached = new Map<UpgradeState, Promise<Reached>>();
    const reach = async (last: boolean) => {
      const states = conversations.filter(({ state }) => (state.reachLast ?? false) === last);
      for (const { state, context } of states) reached.set(state, reachState(state, context));
      await Promise.allSettled(states.map(({ state }) => reached.get(state)!));
    };
    await reach(false);
    await reach(true);

    const stoppedAt = Date.now();
    const exit = await old.stop(DEPLOY_GRACE_MS);
    const stopSeconds = (Date.now() - stoppedAt) / 1000;
    await startWorker('new');

    const outcomes = await Promise.allSettled(
      conversations.map(async ({ state, context }) => {
        const before = await reached.get(state)!.catch((error: unknown) => {
          throw new Error(`not reached on the old worker: ${firstLine(error)}`);
        });
        const what = typeof state.letGo === 'string' ? state.letGo : await state.letGo(context, before);
        const done = await statusWhen(
          context,
          (status) => status.phase === 'idle' && status.turns === 1 && status.lastResult !== undefined,
          'the first turn',
        );
        const recoverySeconds = (Date.now() - stoppedAt) / 1000;
        expect(done.lastResult, `${state.name}: the first turn`).toMatchObject({
          stopReason: 'completed',
          answer: state.answer,
        });
        const next = await within(
          client.ask(context.conversationId, 'And next?'),
          AFTER_UPGRADE_MS,
          `${context.conversationId}: the next message's answer`,
        );
        expect(next.answer, `${state.name}: the next message`).toBe(nextAnswer(state));
        const calls = callsPerTool(context.counterFile);
        expect(calls, `${state.name}: tool runs`).toEqual(state.calls);
        await client.end(context.conversationId);
        await within(
          env.client.workflow.getHandle(conversationWorkflowId(context.conversationId)).result(),
          AFTER_UPGRADE_MS,
          `${context.conversationId} to close`,
        );
        return { what, calls, recoverySeconds };
      }),
    );

    const tasks = await failedWorkflowTasks(env.client, taskQueue);
    const failedTasks = [...tasks.perWorkflow.values()].reduce((sum, count) => sum + count, 0);
    conversations.forEach(({ state, context, order }, index) => {
      const outcome = outcomes[index]!;
      const failed = tasks.perWorkflow.get(conversationWorkflowId(context.conversationId)) ?? 0;
      const runs =
        Object.entries(callsPerTool(context.counterFile))
          .map(([tool, count]) => `${tool} ${count}`)
          .join(', ') || 'none';
      const passed = outcome.status === 'fulfilled' && failed === 0;
      rows.add(
        {
          group,
          fault: state.fault,
          outcome:
            outcome.status === 'fulfilled'
              ? `today's worker took over: ${outcome.value.what}; the turn completed "${state.answer}", the next message got "${nextAnswer(state)}"`
              : `FAILED: ${firstLine(outcome.reason)}`,
          counts: `failed workflow tasks: ${failed} · model requests: ${model.requestsFor(conversationWorkflowId(context.conversationId)).length} · tool runs: ${runs} (expected ${Object.entries(
            state.calls,
          )
            .map(([tool, count]) => `${tool} ${count}`)
            .join(', ')})`,
          ...(outcome.status === 'fulfilled' ? { recoverySeconds: outcome.value.recoverySeconds } : {}),
          passed,
        },
        order,
      );
    });
    rows.add({
      group,
      fault: `the deploy: SIGTERM to the old worker, then today's worker started; the old worker: ${exit} (${stopSeconds.toFixed(1)} s after SIGTERM)`,
      outcome:
        tasks.running === 0 && failedTasks === 0
          ? `every conversation closed when ended; no workflow left running on the task queue`
          : `${tasks.running} workflow(s) left running; first workflow task failure: ${tasks.firstFailure ?? 'none'}`,
      counts: `failed workflow tasks: ${failedTasks} in ${tasks.histories} histories · running workflows: ${tasks.running}`,
      passed: tasks.running === 0 && failedTasks === 0 && outcomes.every((outcome) => outcome.status === 'fulfilled'),
    });

    const failures = outcomes
      .map((outcome, index) =>
        outcome.status === 'rejected' ? `${conversations[index]!.state.name}: ${firstLine(outcome.reason)}` : undefined,
      )
      .filter(Boolean);
    // Every conversation's history was counted: a list that missed them would count no failures.
    const counted = conversations.every(({ context }) =>
      tasks.listed.has(conversationWorkflowId(context.conversationId)),
    );
    expect({ counted, failedTasks, firstFailure: tasks.firstFailure, running: tasks.running, failures }).toEqual({
      counted: true,
      failedTasks: 0,
      firstFailure: undefined,
      running: 0,
      failures: [],
    });
  }, 600_000);
});
