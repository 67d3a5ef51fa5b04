import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeDeployment } from '../../src/client/deployments.js';
import { DurableAgentClient } from '../../src/client/index.js';
import { loadConfig } from '../../src/config/index.js';
import { loadMcpConfig } from '../../src/worker/mcp/config.js';
import { resolveDevServer } from '../../src/temporal-servers/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { ScriptStep } from '../../src/testing/scripted-model/script.js';
import { conversationWorkflowId, statusQuery, type ConversationStatus } from '../../src/workflows/definitions.js';
// The processes this run starts, then what it reads and records.
import { CLI, killLeftovers, requireBuild, TEST_SERVER, WorkerProcess } from './helpers.js';
import { callsPerTool, historyEvents, ResultRows, until, within } from './helpers.js';

/**
 * Worker Versioning: version A (the worker as users run it, `durable-agent worker` with DURABLE_AGENT_DEPLOYMENT_NAME
 * and DURABLE_AGENT_BUILD_ID) holds three conversations, one idle, one mid-turn (its model answer held back) and one
 * awaiting approval, when version B, an incompatible workflow change (./version-b-workflows.ts), becomes current. The
 * turn in flight and the approval finish on A; every next turn runs on B; A drains to no open pinned conversation and
 * `deployments` says it can be shut down. No workflow task fails.
 */

const DEPLOYMENT = 'versioning-fault-run';
const TASK_QUEUE = 'versioning-fault-run';
const AUTO_UPGRADE =
  proto.temporal.api.enums.v1.ContinueAsNewVersioningBehavior.CONTINUE_AS_NEW_VERSIONING_BEHAVIOR_AUTO_UPGRADE;
const ids = { idle: 'versioning-idle', held: 'versioning-held', approval: 'versioning-approval' } as const;

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let temporalCli: string;
let tmp: string;
let versionA: WorkerProcess | undefined;
let versionB: TestAgent | undefined;
let releaseHeldAnswer: () => void = () => undefined;
const heldAnswer = new Promise<void>((resolve) => {
  releaseHeldAnswer = resolve;
});
const counterFile = () => path.join(tmp, 'tools.counter.jsonl');
const rows = new ResultRows('versioning');

/** Each conversation's answers in order; the held conversation's first answer waits for `releaseHeldAnswer`. */
async function step(workflowId: string, stepIndex: number): Promise<ScriptStep | undefined> {
  if (workflowId === conversationWorkflowId(ids.approval) && stepIndex === 0) {
    return { toolCalls: [{ name: 'test__increment', arguments: { key: 'orders' } }] };
  }
  if (workflowId === conversationWorkflowId(ids.held) && stepIndex === 0) await heldAnswer;
  return { content: `${workflowId.replace('conversation-versioning-', '')} answer ${stepIndex}` };
}

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-versioning-'));
  // Temporal re-checks a draining version's open pinned runs every 3 minutes by default; 2 s keeps the run short.
  env = await createLocalEnvironment({
    extraArgs: [
      '--dynamic-config-value',
      'matching.wv.VersionDrainageStatusVisibilityGracePeriod="2s"',
      '--dynamic-config-value',
      'matching.wv.VersionDrainageStatusRefreshInterval="2s"',
    ],
  });
  const server = await resolveDevServer(loadConfig());
  if (server.kind !== 'path') throw new Error('the fault run needs the provisioned temporal CLI');
  temporalCli = server.path;
  model = await startScriptedModel({
    script: (request, { stepIndex }) => step(request.conversation, stepIndex),
    name: 'versioning',
  });
});

afterAll(async () => {
  rows.write();
  releaseHeldAnswer();
  await versionB?.close();
  await versionA?.kill();
  killLeftovers([counterFile()]);
  await model?.close();
  await env?.teardown();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function temporal(...args: string[]): string {
  return execFileSync(temporalCli, [...args, '--address', env.address], { encoding: 'utf8' });
}

/** Make `buildId` current once its workers have registered it with the deployment. */
async function setCurrent(buildId: string): Promise<void> {
  await until(
    async () => {
      // NOT_FOUND until the deployment's first worker polls.
      const report = await describeDeployment(env.client, DEPLOYMENT).catch(() => undefined);
      return report?.versions.some((version) => version.buildId === buildId);
    },
    `version ${buildId} to register`,
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  temporal(
    'worker',
    'deployment',
    'set-current-version',
    '--deployment-name',
    DEPLOYMENT,
    '--build-id',
    buildId,
    '--yes',
  );
}

async function statusWhen(conversationId: string, done: (status: ConversationStatus) => boolean, what: string) {
  const handle = env.client.workflow.getHandle(conversationWorkflowId(conversationId));
  return await until(
    async () => {
      const status = await handle.query(statusQuery).catch(() => undefined);
      return status && done(status) ? status : undefined;
    },
    what,
    { timeoutMs: 120_000, intervalMs: 200 },
  );
}

interface RunRecord {
  runId: string;
  /** Build ids of the workers that completed the run's workflow tasks. */
  buildIds: string[];
  failedWorkflowTasks: number;
  /** Activity types the run scheduled, in order: which turns' work ran in it. */
  activities: string[];
  /** The run was started by a continue-as-new with `initialVersioningBehavior: AUTO_UPGRADE`. */
  upgraded: boolean;
  /** The first command of the run was B's memo. */
  startsWithMemo: boolean;
  handle: WorkflowHandle;
}

/** Every run of a conversation, oldest first, with who ran it. */
async function runsOf(conversationId: string): Promise<RunRecord[]> {
  const workflowId = conversationWorkflowId(conversationId);
  const executions = [];
  for await (const execution of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    executions.push(execution);
  }
  executions.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
  return await Promise.all(
    executions.map(async ({ runId }) => {
      const handle = env.client.workflow.getHandle(workflowId, runId);
      const events = await historyEvents(handle);
      const completed = events.filter((event) => event.workflowTaskCompletedEventAttributes);
      // B's memo is the first command of a run's first workflow task, the event right after that task completed.
      const firstTask = completed[0];
      const firstCommand = firstTask && events.find((event) => Number(event.eventId) === Number(firstTask.eventId) + 1);
      return {
        runId,
        buildIds: [
          ...new Set(
            completed.map((event) => event.workflowTaskCompletedEventAttributes!.deploymentVersion?.buildId ?? ''),
          ),
        ],
        failedWorkflowTasks: events.filter((event) => event.workflowTaskFailedEventAttributes).length,
        activities: events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []),
        upgraded:
          events[0]?.workflowExecutionStartedEventAttributes?.inheritedAutoUpgradeInfo
            ?.continueAsNewInitialVersioningBehavior === AUTO_UPGRADE,
        startsWithMemo: firstCommand?.workflowPropertiesModifiedEventAttributes != null,
        handle,
      };
    }),
  );
}

describe('Worker Versioning: a new, incompatible version becomes current', () => {
  it('turns in flight and approvals finish on the old version, next turns run on the new one, the old one drains', async () => {
    const mcpConfigPath = path.join(tmp, 'mcp.json');
    const testServer = {
      command: process.execPath,
      args: [TEST_SERVER],
      env: { MCP_TEST_COUNTER_FILE: counterFile() },
    };
    writeFileSync(
      mcpConfigPath,
      JSON.stringify({ mcpServers: { test: { ...testServer, requireApproval: ['increment'] } } }),
    );
    versionA = await WorkerProcess.start({
      temporalAddress: env.address,
      taskQueue: TASK_QUEUE,
      modelBaseUrl: model.baseUrl,
      mcpConfigPath,
      logFile: path.join(tmp, 'version-a.log'),
      extraEnvironment: { DURABLE_AGENT_DEPLOYMENT_NAME: DEPLOYMENT, DURABLE_AGENT_BUILD_ID: 'A' },
    });
    await setCurrent('A');
    const agents = new DurableAgentClient({ client: env.client, taskQueue: TASK_QUEUE });

    // On A: one conversation answered and idle, one with its model answer held back, one awaiting approval.
    const first = await within(agents.ask(ids.idle, 'first', { messageId: 'idle-1' }), 60_000, 'the idle turn');
    expect(first.answer).toBe('idle answer 0');
    await agents.send(ids.held, 'first', { messageId: 'held-1' });
    await agents.send(ids.approval, 'first', { messageId: 'approval-1' });
    await until(() => model.requestsFor(conversationWorkflowId(ids.held)).length > 0, 'the held model call');
    const waiting = await statusWhen(ids.approval, (status) => status.phase === 'awaiting_approval', 'the approval');
    const [pending] = waiting.pendingApprovals!;

    // B: an incompatible workflow change, made current while A still holds all three.
    const bundleB = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./version-b-workflows.ts', import.meta.url)),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
    versionB = await startTestAgent({
      env,
      model,
      taskQueue: TASK_QUEUE,
      mcpServers: loadMcpConfig(mcpConfigPath),
      workerOptions: {
        deploymentVersion: { deploymentName: DEPLOYMENT, buildId: 'B' },
        worker: { workflowBundle: bundleB },
      },
    });
    await setCurrent('B');
    const switchedAt = Date.now();

    // The turn in flight and the approval finish where they started.
    releaseHeldAnswer();
    await agents.approve(ids.approval, pending!.callId, { by: 'ops@example.com' });
    const heldDone = await statusWhen(
      ids.held,
      (status) => status.turns === 1 && status.phase === 'idle',
      'the held turn',
    );
    const approvalDone = await statusWhen(
      ids.approval,
      (status) => status.turns === 1 && status.phase === 'idle',
      'the approved turn',
    );
    expect(heldDone.lastResult).toMatchObject({ answer: 'held answer 0', stopReason: 'completed' });
    expect(approvalDone.lastResult).toMatchObject({
      answer: 'approval answer 1',
      stopReason: 'completed',
      toolCalls: 1,
    });

    // Every next turn runs on B (the idle conversation moves on this message).
    const next = {
      idle: await within(agents.ask(ids.idle, 'second', { messageId: 'idle-2' }), 60_000, 'the idle conversation'),
      held: await within(agents.ask(ids.held, 'second', { messageId: 'held-2' }), 60_000, 'the held conversation'),
      approval: await within(
        agents.ask(ids.approval, 'second', { messageId: 'approval-2' }),
        60_000,
        'the approval one',
      ),
    };
    expect(next.idle.answer).toBe('idle answer 1');
    expect(next.held.answer).toBe('held answer 1');
    expect(next.approval.answer).toBe('approval answer 2');
    expect(callsPerTool(counterFile())).toEqual({ increment: 1 });

    const runs = Object.fromEntries(
      await Promise.all(Object.entries(ids).map(async ([name, id]) => [name, await runsOf(id)] as const)),
    ) as Record<keyof typeof ids, RunRecord[]>;
    for (const [name, conversationRuns] of Object.entries(runs)) {
      const [onA, ...later] = conversationRuns;
      expect(onA!.buildIds, `${name}: its first run`).toEqual(['A']);
      expect(later.length, `${name}: runs after A (one: the move to B)`).toBe(1);
      for (const run of later) {
        expect(run.buildIds, `${name}: run ${run.runId}`).toEqual(['B']);
        expect(run.upgraded, `${name}: run ${run.runId} continued from A onto the current version`).toBe(true);
        expect(run.startsWithMemo, `${name}: run ${run.runId} runs B's code`).toBe(true);
      }
      expect(
        conversationRuns.map((run) => run.failedWorkflowTasks),
        `${name}: failed workflow tasks`,
      ).toEqual(conversationRuns.map(() => 0));
    }
    // Each first turn's work ran on A (the approved tool call too), each second turn's on B.
    expect(runs.held[0]!.activities).toEqual(['callModel']);
    expect(runs.approval[0]!.activities).toEqual(['callModel', 'callTool', 'callModel']);
    for (const conversationRuns of Object.values(runs)) expect(conversationRuns[1]!.activities).toEqual(['callModel']);
    // B is incompatible: A's histories do not replay on it, so only continue-as-new could have brought them there.
    for (const conversationRuns of Object.values(runs)) {
      const history = await conversationRuns[0]!.handle.fetchHistory();
      await expect(
        Worker.runReplayHistory({ workflowBundle: bundleB }, history, conversationRuns[0]!.handle.workflowId),
      ).rejects.toBeInstanceOf(DeterminismViolationError);
    }

    // A drains: no open conversation pinned to it, and `deployments` says it can be shut down.
    const drained = await until(
      async () => {
        const report = await describeDeployment(env.client, DEPLOYMENT);
        const a = report.versions.find((version) => version.buildId === 'A');
        return a?.canShutDown ? report : undefined;
      },
      'version A to drain',
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    const drainSeconds = (Date.now() - switchedAt) / 1000;
    const a = drained.versions.find((version) => version.buildId === 'A')!;
    const b = drained.versions.find((version) => version.buildId === 'B')!;
    expect(a).toMatchObject({ status: 'drained', openPinnedConversations: 0, canShutDown: true });
    expect(b).toMatchObject({ status: 'current', openPinnedConversations: 3, canShutDown: false });
    // The command users run says the same.
    const output = execFileSync(process.execPath, [CLI, 'deployments', '--name', DEPLOYMENT, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, TEMPORAL_ADDRESS: env.address, DURABLE_AGENT_TASK_QUEUE: TASK_QUEUE },
    });
    const [report] = JSON.parse(output) as Awaited<ReturnType<typeof describeDeployment>>[];
    expect(report!.versions.find((version) => version.buildId === 'A')).toMatchObject({ canShutDown: true });

    rows.add({
      group: 'Worker Versioning: an incompatible version B made current while version A holds conversations',
      fault: 'B current while on A: one conversation idle, one mid-turn (model answer held), one awaiting approval',
      outcome:
        'the held turn and the approval finished on A; each conversation continued as new onto B (auto-upgrade) and ' +
        `answered its next turn there; A drained (\`deployments\`: can be shut down)`,
      counts: `runs on A 3 · runs on B ${Object.values(runs).reduce((sum, list) => sum + list.length - 1, 0)} · failed workflow tasks 0 · increment runs 1`,
      recoverySeconds: drainSeconds,
      passed: true,
    });
  });
});
