import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { ConfigError } from '../../src/config/index.js';
import { readTenantCallsPerSecond } from '../../src/config/tenant-rate-limit.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { applyTenantRateLimit, tenantRateLimitMessage } from '../../src/worker/tenant-rate-limit.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { killAll, runCli, startCliWorker } from '../cli/helpers.js';
import { createFairDevServer } from '../helpers/fair-dev-server.js';

const { EventType, TaskQueueType } = temporal.api.enums.v1;

/** The burst: conversations of one tenant at once, each a model call, two tool calls at once, and a model call. */
const CONVERSATIONS = 3;
const ACTIVITIES_PER_TURN = 4;
const CALLS_PER_SECOND = 2;
/** Temporal's per-key limiter lets a key burst one second's worth of tasks (`defaultBurstDuration` in matching). */
const BURST_SECONDS = 1;

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let mcp: RunningTestMcpServer;
let directory: string;
let cliEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  // Fairness on as under `durable-agent dev` (eager activities too); one partition per task queue.
  env = await createFairDevServer();
  mcp = await startTestMcpServer({ transport: 'http', port: 0 });
  model = await startScriptedModel({
    script: (_request, { stepIndex }) =>
      stepIndex === 0
        ? {
            toolCalls: [
              { name: 'notes__echo', arguments: { text: 'one' } },
              { name: 'notes__echo', arguments: { text: 'two' } },
            ],
          }
        : stepIndex === 1
          ? { content: 'both echoed' }
          : undefined,
  });
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-rate-limit-'));
  const mcpConfig = path.join(directory, 'mcp.json');
  await fs.writeFile(mcpConfig, JSON.stringify({ mcpServers: { notes: { url: mcp.url } } }));
  cliEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    OPENAI_BASE_URL: model.baseUrl,
    DURABLE_AGENT_MODEL: 'scripted-model',
    DURABLE_AGENT_MCP_CONFIG: mcpConfig,
  };
});

afterAll(async () => {
  await killAll();
  await mcp?.close();
  await model?.close();
  await env?.teardown();
  if (directory) await fs.rm(directory, { recursive: true, force: true });
});

/** The activity task queue's config as `temporal task-queue config get` reports it. */
async function activityQueueConfig(taskQueue: string) {
  const described = await env.client.workflowService.describeTaskQueue({
    namespace: env.namespace ?? 'default',
    taskQueue: { name: taskQueue },
    taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    reportConfig: true,
  });
  return described.config;
}

function millis(event: temporal.api.history.v1.IHistoryEvent): number {
  return Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;
}

/** The times (ms) at which the conversations' activities were scheduled and started, from their histories. */
async function activityTimes(conversationIds: string[]): Promise<{ scheduled: number[]; started: number[] }> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  for (const id of conversationIds) {
    events.push(...((await env.client.workflow.getHandle(conversationWorkflowId(id)).fetchHistory()).events ?? []));
  }
  const timesOf = (type: temporal.api.enums.v1.EventType) =>
    events.filter((event) => event.eventType === type).map(millis);
  return {
    scheduled: timesOf(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
    started: timesOf(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED),
  };
}

describe('a rate limit per tenant (DURABLE_AGENT_TENANT_CALLS_PER_SECOND)', () => {
  it("rate limit: the worker sets it on its activity task queue, and a tenant's model and tool calls are dispatched no faster", async () => {
    const taskQueue = 'rate-limited';
    const worker = await startCliWorker({
      ...cliEnv,
      DURABLE_AGENT_TASK_QUEUE: taskQueue,
      DURABLE_AGENT_TENANT_CALLS_PER_SECOND: String(CALLS_PER_SECOND),
    });
    expect(worker.output()).toContain(
      `Worker: each tenant's model and tool calls on task queue ${taskQueue} are dispatched at most ` +
        `${CALLS_PER_SECOND} per second, times its weight (DURABLE_AGENT_TENANT_CALLS_PER_SECOND=${CALLS_PER_SECOND}).`,
    );
    const config = await activityQueueConfig(taskQueue);
    expect(config?.fairnessKeysRateLimitDefault?.rateLimit?.requestsPerSecond).toBe(CALLS_PER_SECOND);
    expect(config?.fairnessKeysRateLimitDefault?.metadata?.reason).toBe(
      `durable-agent: DURABLE_AGENT_TENANT_CALLS_PER_SECOND=${CALLS_PER_SECOND}`,
    );
    expect(config?.fairnessKeysRateLimitDefault?.metadata?.updateIdentity).toMatch(
      new RegExp(`^durable-agent worker ${worker.child.pid}@`),
    );
    // The queue as a whole is not limited: only each tenant.
    expect(config?.queueRateLimit?.rateLimit ?? undefined).toBeUndefined();

    const client = new DurableAgentClient({ client: env.client, taskQueue });
    const ids = Array.from({ length: CONVERSATIONS }, (_, index) => `limited-${index}`);
    // Beside them, conversations without a tenant: they share one fairness key, the empty one, and so one limit.
    const untenanted = Array.from({ length: CONVERSATIONS - 1 }, (_, index) => `untenanted-${index}`);
    const results = await Promise.all([
      ...ids.map((id) => client.ask(id, 'echo twice', { settings: { tenant: 'limited' } })),
      ...untenanted.map((id) => client.ask(id, 'echo twice')),
    ]);
    expect(results.map((result) => [result.stopReason, result.toolCalls, result.answer])).toEqual(
      results.map(() => ['completed', 2, 'both echoed']),
    );

    for (const conversations of [ids, untenanted]) {
      const { scheduled, started } = await activityTimes(conversations);
      const tasks = conversations.length * ACTIVITIES_PER_TURN;
      expect(started).toHaveLength(tasks);
      // Matching dispatches a key's tasks one per 1/CALLS_PER_SECOND s after a burst of one second's worth (3 at once,
      // then one every 500 ms): the last of a key's tasks cannot start earlier than this after the first was scheduled
      // (a task starts after it is dispatched, and is dispatched after it is scheduled). A limit only delays, so a slow
      // machine cannot fail this. Without the limit the two tool calls and the conversations start together; so do
      // eager activities, which skip matching (seen: the tenant's twelve in 0.9 s, when the worker still took them).
      const span = Math.max(...started) - Math.min(...scheduled);
      expect(span).toBeGreaterThanOrEqual(((tasks - 1) / CALLS_PER_SECOND - BURST_SECONDS) * 1000);
    }
  });

  it("rate limit: unset, the worker leaves the queue's config as an operator set it", async () => {
    const taskQueue = 'operator-limited';
    await env.client.workflowService.updateTaskQueueConfig({
      namespace: env.namespace ?? 'default',
      identity: 'operator',
      taskQueue,
      taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      updateFairnessKeyRateLimitDefault: { rateLimit: { requestsPerSecond: 5 }, reason: 'set by hand' },
    });
    const worker = await startCliWorker({ ...cliEnv, DURABLE_AGENT_TASK_QUEUE: taskQueue });
    expect(worker.output()).not.toContain('DURABLE_AGENT_TENANT_CALLS_PER_SECOND');
    const config = await activityQueueConfig(taskQueue);
    expect(config?.fairnessKeysRateLimitDefault?.rateLimit?.requestsPerSecond).toBe(5);
    expect(config?.fairnessKeysRateLimitDefault?.metadata).toMatchObject({
      reason: 'set by hand',
      updateIdentity: 'operator',
    });
  });

  it('rate limit: a server without the task queue config API refuses it; the worker warns, naming the setting, and runs', async () => {
    const timeSkipping = await createTimeSkippingEnvironment();
    try {
      const connection = await Connection.connect({ address: timeSkipping.address });
      const limit = { connection, namespace: 'default', taskQueue: 'refused', callsPerSecond: 2 };
      const outcome = await applyTenantRateLimit(limit);
      await connection.close();
      expect(outcome).toMatchObject({ applied: false, refusal: expect.any(String) });
      const warning = tenantRateLimitMessage(outcome, limit);
      expect(warning).toMatch(/^Worker: could not set DURABLE_AGENT_TENANT_CALLS_PER_SECOND=2 on task queue refused/);
      expect(warning).toContain("Tenants' calls are not rate limited.");
      expect(warning).toContain(
        'temporal task-queue config set --task-queue refused --task-queue-type activity ' +
          '--fairness-key-rps-limit-default 2',
      );

      // The worker itself: the warning, and then it polls.
      const worker = await startCliWorker({
        ...cliEnv,
        TEMPORAL_ADDRESS: timeSkipping.address,
        DURABLE_AGENT_TASK_QUEUE: 'refused',
        DURABLE_AGENT_TENANT_CALLS_PER_SECOND: '2',
      });
      expect(worker.output()).toContain('Worker: could not set DURABLE_AGENT_TENANT_CALLS_PER_SECOND=2');
      expect(worker.child.exitCode).toBeNull();
      await killAll();
    } finally {
      await timeSkipping.teardown();
    }
  });
});

describe('DURABLE_AGENT_TENANT_CALLS_PER_SECOND values', () => {
  it('rate limit: a positive number is read; unset or empty is no limit', () => {
    expect(readTenantCallsPerSecond({ DURABLE_AGENT_TENANT_CALLS_PER_SECOND: '2' })).toBe(2);
    expect(readTenantCallsPerSecond({ DURABLE_AGENT_TENANT_CALLS_PER_SECOND: ' 0.5 ' })).toBe(0.5);
    expect(readTenantCallsPerSecond({})).toBeUndefined();
    expect(readTenantCallsPerSecond({ DURABLE_AGENT_TENANT_CALLS_PER_SECOND: '' })).toBeUndefined();
  });

  it.each(['0', '-1', 'fast', 'Infinity', '2000000'])(
    'rate limit: %j is a ConfigError naming the variable and what is expected',
    (value) => {
      const read = () => readTenantCallsPerSecond({ DURABLE_AGENT_TENANT_CALLS_PER_SECOND: value });
      expect(read).toThrow(ConfigError);
      expect(read).toThrow(
        `Invalid DURABLE_AGENT_TENANT_CALLS_PER_SECOND=${JSON.stringify(value)}: expected a number of calls per ` +
          'second above 0 and at most 1000000',
      );
    },
  );

  it('rate limit: a bad value stops `worker` and `dev` at start with exit 2, before they connect', async () => {
    for (const command of ['worker', 'dev']) {
      const run = await runCli([command], {
        ...process.env,
        // Nothing listens here: the worker must stop on the value before it tries.
        TEMPORAL_ADDRESS: '127.0.0.1:1',
        DURABLE_AGENT_TENANT_CALLS_PER_SECOND: '0',
      });
      expect(run.code).toBe(ExitCode.Usage);
      expect(run.stderr).toContain('Invalid DURABLE_AGENT_TENANT_CALLS_PER_SECOND="0": expected a number of calls');
      expect(run.stderr).not.toContain('Cannot reach Temporal');
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
