import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { expect } from 'vitest';
import { describeDeployment } from '../../src/client/deployments.js';
import { DurableAgentClient } from '../../src/client/index.js';
import { loadMcpConfig } from '../../src/worker/mcp/config.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { ScriptStep } from '../../src/testing/scripted-model/script.js';
import { conversationWorkflowId, statusQuery, type ConversationStatus } from '../../src/workflows/definitions.js';
import { CLI, killLeftovers, TEST_SERVER, WorkerProcess } from './helpers.js';
import { callsPerTool, historyEvents, type ResultRow, until, within } from './helpers.js';

/**
 * Worker Versioning's fault run, on whichever Temporal server it is given (./versioning.reliability.ts: the dev server;
 * ./production-stack.reliability.ts: the production stack): version A (the worker as users run it, `durable-agent
 * worker` with DURABLE_AGENT_DEPLOYMENT_NAME and DURABLE_AGENT_BUILD_ID) holds three conversations, one idle, one
 * mid-turn (its model answer held back) and one awaiting approval, when version B, an incompatible workflow change
 * (./version-b-workflows.ts), becomes current. The turn in flight and the approval finish on A; every next turn runs on
 * B; A drains to no open pinned conversation and `deployments` says it can be shut down. No workflow task fails.
 *
 * The server must re-check a draining version's open pinned runs often (by default every 3 minutes): see
 * {@link DRAINAGE_DYNAMIC_CONFIG}.
 */

/** The dynamic config that keeps the run short: Temporal re-checks a draining version every 2 s instead of 3 min. */
export const DRAINAGE_DYNAMIC_CONFIG = {
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '2s',
  'matching.wv.VersionDrainageStatusRefreshInterval': '2s',
} as const;

export interface VersioningTarget {
  /** The server's environment (its client, address and native connection). */
  env: TestWorkflowEnvironment;
  /** The provisioned `temporal` CLI, which makes a version current. */
  temporalCli: string;
  /** A scratch directory for the MCP config, the tool counter and version A's log. */
  tmp: string;
  /** Names this run's deployment and task queue, so two runs on one server do not meet. */
  name: string;
}

const AUTO_UPGRADE =
  proto.temporal.api.enums.v1.ContinueAsNewVersioningBehavior.CONTINUE_AS_NEW_VERSIONING_BEHAVIOR_AUTO_UPGRADE;

/** Runs the scenario, asserting as it goes; its result row for docs/reliability.md. Stops what it started. */
export async function runVersioningScenario(target: VersioningTarget): Promise<ResultRow> {
  const run = new VersioningRun(target);
  try {
    return await run.run();
  } finally {
    await run.close();
  }
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

type Ids = { idle: string; held: string; approval: string };

class VersioningRun {
  private readonly env: TestWorkflowEnvironment;
  private readonly deployment: string;
  private readonly taskQueue: string;
  private readonly ids: Ids;
  private model: ScriptedModel | undefined;
  private versionA: WorkerProcess | undefined;
  private versionB: TestAgent | undefined;
  private releaseHeldAnswer: () => void = () => undefined;
  private readonly heldAnswer = new Promise<void>((resolve) => {
    this.releaseHeldAnswer = resolve;
  });

  constructor(private readonly target: VersioningTarget) {
    this.env = target.env;
    this.deployment = target.name;
    this.taskQueue = target.name;
    this.ids = { idle: `${target.name}-idle`, held: `${target.name}-held`, approval: `${target.name}-approval` };
  }

  private get counterFile(): string {
    return path.join(this.target.tmp, `${this.target.name}.counter.jsonl`);
  }

  async close(): Promise<void> {
    this.releaseHeldAnswer();
    await this.versionB?.close();
    await this.versionA?.kill();
    killLeftovers([this.counterFile]);
    await this.model?.close();
  }

  /** Each conversation's answers in order; the held conversation's first answer waits for `releaseHeldAnswer`. */
  private async step(workflowId: string, stepIndex: number): Promise<ScriptStep | undefined> {
    const { ids } = this;
    if (workflowId === conversationWorkflowId(ids.approval) && stepIndex === 0) {
      return { toolCalls: [{ name: 'test__increment', arguments: { key: 'orders' } }] };
    }
    if (workflowId === conversationWorkflowId(ids.held) && stepIndex === 0) await this.heldAnswer;
    return { content: `${this.kindOf(workflowId)} answer ${stepIndex}` };
  }

  private kindOf(workflowId: string): string {
    return Object.entries(this.ids).find(([, id]) => conversationWorkflowId(id) === workflowId)?.[0] ?? workflowId;
  }

  private temporal(...args: string[]): string {
    return execFileSync(this.target.temporalCli, [...args, '--address', this.env.address], { encoding: 'utf8' });
  }

  /** Make `buildId` current once its workers have registered it with the deployment. */
  private async setCurrent(buildId: string): Promise<void> {
    await until(
      async () => {
        // NOT_FOUND until the deployment's first worker polls.
        const report = await describeDeployment(this.env.client, this.deployment).catch(() => undefined);
        return report?.versions.some((version) => version.buildId === buildId);
      },
      `version ${buildId} to register`,
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    const deployment = ['--deployment-name', this.deployment, '--build-id', buildId, '--yes'];
    this.temporal('worker', 'deployment', 'set-current-version', ...deployment);
  }

  private async statusWhen(conversationId: string, done: (status: ConversationStatus) => boolean, what: string) {
    const handle = this.env.client.workflow.getHandle(conversationWorkflowId(conversationId));
    return await until(
      async () => {
        const status = await handle.query(statusQuery).catch(() => undefined);
        return status && done(status) ? status : undefined;
      },
      what,
      { timeoutMs: 120_000, intervalMs: 200 },
    );
  }

  async run(): Promise<ResultRow> {
    const model = await startScriptedModel({
      script: (request, { stepIndex }) => this.step(request.conversation, stepIndex),
      name: this.target.name,
    });
    this.model = model;
    const mcpConfigPath = path.join(this.target.tmp, 'mcp.json');
    const testServer = {
      command: process.execPath,
      args: [TEST_SERVER],
      env: { MCP_TEST_COUNTER_FILE: this.counterFile },
    };
    writeFileSync(
      mcpConfigPath,
      JSON.stringify({ mcpServers: { test: { ...testServer, requireApproval: ['increment'] } } }),
    );
    this.versionA = await WorkerProcess.start({
      temporalAddress: this.env.address,
      taskQueue: this.taskQueue,
      modelBaseUrl: model.baseUrl,
      mcpConfigPath,
      logFile: path.join(this.target.tmp, `${this.target.name}-version-a.log`),
      extraEnvironment: { DURABLE_AGENT_DEPLOYMENT_NAME: this.deployment, DURABLE_AGENT_BUILD_ID: 'A' },
    });
    await this.setCurrent('A');
    const agents = new DurableAgentClient({ client: this.env.client, taskQueue: this.taskQueue });

    // On A: one conversation answered and idle, one with its model answer held back, one awaiting approval.
    const first = await within(agents.ask(this.ids.idle, 'first', { messageId: 'idle-1' }), 60_000, 'the idle turn');
    expect(first.answer).toBe('idle answer 0');
    await agents.send(this.ids.held, 'first', { messageId: 'held-1' });
    await agents.send(this.ids.approval, 'first', { messageId: 'approval-1' });
    await until(() => model.requestsFor(conversationWorkflowId(this.ids.held)).length > 0, 'the held model call');
    const waiting = await this.statusWhen(
      this.ids.approval,
      (status) => status.phase === 'awaiting_approval',
      'the approval',
    );
    const [pending] = waiting.pendingApprovals!;

    // B: an incompatible workflow change, made current while A still holds all three.
    const bundleB = await bundleWorkflowCode({
      workflowsPath: fileURLToPath(new URL('./version-b-workflows.ts', import.meta.url)),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    });
    this.versionB = await startTestAgent({
      env: this.env,
      model,
      taskQueue: this.taskQueue,
      mcpServers: loadMcpConfig(mcpConfigPath),
      workerOptions: {
        deploymentVersion: { deploymentName: this.deployment, buildId: 'B' },
        worker: { workflowBundle: bundleB },
      },
    });
    await this.setCurrent('B');
    const switchedAt = Date.now();

    // The turn in flight and the approval finish where they started.
    this.releaseHeldAnswer();
    await agents.approve(this.ids.approval, pending!.callId, { by: 'ops@example.com' });
    const heldDone = await this.statusWhen(
      this.ids.held,
      (status) => status.turns === 1 && status.phase === 'idle',
      'the held turn',
    );
    const approvalDone = await this.statusWhen(
      this.ids.approval,
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
      idle: await within(agents.ask(this.ids.idle, 'second', { messageId: 'idle-2' }), 60_000, 'the idle conversation'),
      held: await within(agents.ask(this.ids.held, 'second', { messageId: 'held-2' }), 60_000, 'the held conversation'),
      approval: await within(
        agents.ask(this.ids.approval, 'second', { messageId: 'approval-2' }),
        60_000,
        'the approval one',
      ),
    };
    expect(next.idle.answer).toBe('idle answer 1');
    expect(next.held.answer).toBe('held answer 1');
    expect(next.approval.answer).toBe('approval answer 2');
    expect(callsPerTool(this.counterFile)).toEqual({ increment: 1 });

    const runs = Object.fromEntries(
      await Promise.all(Object.entries(this.ids).map(async ([name, id]) => [name, await this.runsOf(id)] as const)),
    ) as Record<keyof Ids, RunRecord[]>;
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
        const report = await describeDeployment(this.env.client, this.deployment);
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
    const output = execFileSync(process.execPath, [CLI, 'deployments', '--name', this.deployment, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, TEMPORAL_ADDRESS: this.env.address, DURABLE_AGENT_TASK_QUEUE: this.taskQueue },
    });
    const [report] = JSON.parse(output) as Awaited<ReturnType<typeof describeDeployment>>[];
    expect(report!.versions.find((version) => version.buildId === 'A')).toMatchObject({ canShutDown: true });

    return {
      group: 'Worker Versioning: an incompatible version B made current while version A holds conversations',
      fault: 'B current while on A: one conversation idle, one mid-turn (model answer held), one awaiting approval',
      outcome:
        'the held turn and the approval finished on A; each conversation continued as new onto B (auto-upgrade) and ' +
        `answered its next turn there; A drained (\`deployments\`: can be shut down)`,
      counts: `runs on A 3 · runs on B ${Object.values(runs).reduce((sum, list) => sum + list.length - 1, 0)} · failed workflow tasks 0 · increment runs 1`,
      recoverySeconds: drainSeconds,
      passed: true,
    };
  }

  /** Every run of a conversation, oldest first, with who ran it. */
  async runsOf(conversationId: string): Promise<RunRecord[]> {
    const workflowId = conversationWorkflowId(conversationId);
    const executions = [];
    for await (const execution of this.env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      executions.push(execution);
    }
    executions.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
    return await Promise.all(
      executions.map(async ({ runId }) => {
        const handle = this.env.client.workflow.getHandle(workflowId, runId);
        const events = await historyEvents(handle);
        const completed = events.filter((event) => event.workflowTaskCompletedEventAttributes);
        // B's memo is the first command of a run's first workflow task, the event right after that task completed.
        const firstTask = completed[0];
        const firstCommand =
          firstTask && events.find((event) => Number(event.eventId) === Number(firstTask.eventId) + 1);
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
}
