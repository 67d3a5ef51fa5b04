import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { clientTelemetryInterceptors, startTelemetry, type Telemetry } from '../../src/worker/telemetry/index.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel, type ScriptStep } from '../../src/testing/scripted-model/index.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedMetricPoint } from '../helpers/otlp-receiver.js';
import { requireBuild, until, WorkerProcess, writeMcpConfig } from '../reliability/helpers.js';
import { closeWorkerBed } from './close-worker-bed.js';

/**
 * The metric values a worker exports, as users run it (`durable-agent worker` in its own process, OTEL_* set) to an
 * OTLP receiver started here, on a dev server (visibility answers the conversation counts). One worker serves the
 * file and the counters are cumulative, so each test's expected values include the earlier tests'.
 */

let env: TestWorkflowEnvironment;
let receiver: OtlpReceiver;
let telemetry: Telemetry;
let model: ScriptedModel;
let worker: WorkerProcess | undefined;
let agent: DurableAgentClient;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'otel-metrics-'));
const counterFile = path.join(tmp, 'calls.jsonl');
const logFile = path.join(tmp, 'worker.log');

/** The model's answers, by the conversation's first message. */
const ANSWERS: Record<string, ScriptStep[]> = {
  Hi: [{ content: 'Hello.' }],
  'Echo it, once approved.': [
    { toolCalls: [{ name: 'test__echo', arguments: { text: 'approved' } }] },
    { content: 'Echoed.' },
  ],
  'Ask me who I am.': [
    { toolCalls: [{ name: 'test__ask_user', arguments: { message: 'Who are you?' } }] },
    { content: 'You are Ada.' },
  ],
  'Trace me.': [{ content: 'Traced.' }],
  'Roll over.': [{ content: 'Rolled.' }],
  'Count me for acme.': [{ content: 'Counted.' }],
};

beforeAll(async () => {
  requireBuild();
  receiver = await startOtlpReceiver();
  telemetry = startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })!;
  model = await startScriptedModel({
    // Each conversation has its own cursor through the script: its first message picks its answers.
    script: (request, { stepIndex }) => {
      const first = request.messages.find((message) => message.role === 'user')?.content;
      return ANSWERS[typeof first === 'string' ? first : '']?.[stepIndex];
    },
  });
  env = await createLocalEnvironment();
  const taskQueue = `otel-metrics-${randomUUID()}`;
  const mcpConfigPath = path.join(tmp, 'mcp.json');
  writeMcpConfig(mcpConfigPath, counterFile);
  worker = await WorkerProcess.start({
    temporalAddress: env.address,
    taskQueue,
    modelBaseUrl: model.baseUrl,
    mcpConfigPath,
    logFile,
    extraEnvironment: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
      DURABLE_AGENT_OTEL_CONVERSATIONS_INTERVAL: '1',
    },
  });
  const client = new Client({
    connection: env.connection,
    namespace: env.namespace ?? 'default',
    interceptors: { workflow: clientTelemetryInterceptors(telemetry) },
  });
  agent = new DurableAgentClient({ client, taskQueue });
});

afterAll(() => closeWorkerBed({ workers: [worker], counterFile, env, model, telemetry, receiver, tmp }));

/** The newest exported point of a metric with these attributes (the Runtime exports cumulative values). */
function latest(name: string, attributes: Record<string, unknown>): ReceivedMetricPoint | undefined {
  return receiver.metrics.findLast(
    (point) =>
      point.name.endsWith(name) && Object.entries(attributes).every(([key, value]) => point.attributes[key] === value),
  );
}

const STATUSES = ['idle', 'running', 'awaiting_approval', 'awaiting_input', 'ended'] as const;

/** The gauge's newest value per status, once it reads `expected` (visibility and exports lag by a moment). */
async function conversationsReach(expected: Record<(typeof STATUSES)[number], number>) {
  const current = () =>
    Object.fromEntries(STATUSES.map((status) => [status, latest('durable_agent.conversations', { status })?.value]));
  try {
    return await until(() => JSON.stringify(current()) === JSON.stringify(expected) && current(), 'the gauge', {
      timeoutMs: 60_000,
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}: last seen ${JSON.stringify(current())}`, { cause: error });
  }
}

/** What waits for a person now, as docs/observability.md says to compute it: started minus ended. */
function pending(kind: string): number {
  return (
    (latest('durable_agent.waits.started', { kind })?.value ?? 0) -
    (latest('durable_agent.waits.ended', { kind })?.value ?? 0)
  );
}

describe('worker metrics', () => {
  it('conversations: the worker exports durable_agent.conversations by status, counted in visibility', async () => {
    const idle = `idle-${randomUUID()}`;
    await expect(agent.ask(idle, 'Hi')).resolves.toMatchObject({ stopReason: 'completed', answer: 'Hello.' });
    const ended = `ended-${randomUUID()}`;
    await agent.start(ended);
    await agent.end(ended);
    await conversationsReach({ idle: 1, running: 0, awaiting_approval: 0, awaiting_input: 0, ended: 1 });
    expect(receiver.refused).toEqual([]);
  }, 180_000);

  it('waits: an approval is pending while it waits, then ends with the time the person took', async () => {
    const id = `approval-${randomUUID()}`;
    await agent.send(id, 'Echo it, once approved.', { settings: { approval: { require: ['test__echo'] } } });
    const [approval] = await until(async () => {
      const calls = await agent.pendingApprovals(id);
      return calls.length > 0 && calls;
    }, 'the call to await approval');
    await until(() => pending('approval') === 1, 'one approval pending in the metrics', { timeoutMs: 60_000 });
    await conversationsReach({ idle: 1, running: 0, awaiting_approval: 1, awaiting_input: 0, ended: 1 });
    const waitedFrom = Date.now();
    await sleep(2_000);
    await agent.approve(id, approval!.callId);
    const duration = await until(
      () => latest('durable_agent.wait.duration', { kind: 'approval', outcome: 'approved' }),
      'the approval wait duration',
      { timeoutMs: 60_000 },
    );
    const waitedMs = Date.now() - waitedFrom;
    await until(() => pending('approval') === 0, 'no approval pending in the metrics', { timeoutMs: 60_000 });
    expect(latest('durable_agent.waits.started', { kind: 'approval' })?.value).toBe(1);
    expect(duration.value).toBe(1);
    // Workflow time from the request to the decision: at least the two seconds waited here, at most until it was seen.
    expect(duration.sum).toBeGreaterThanOrEqual(2);
    expect(duration.sum).toBeLessThan(waitedMs / 1000 + 30);
  }, 180_000);

  it("waits: a server's question is pending while it waits, then ends with the answer's action", async () => {
    const id = `question-${randomUUID()}`;
    await agent.send(id, 'Ask me who I am.');
    const [question] = await until(async () => {
      const inputs = await agent.pendingInputs(id);
      return inputs.length > 0 && inputs;
    }, 'the question');
    await until(() => pending('question') === 1, 'one question pending in the metrics', { timeoutMs: 60_000 });
    await sleep(1_000);
    await agent.answerInput(id, question!.requestId, { action: 'accept', content: { name: 'Ada' } });
    const duration = await until(
      () => latest('durable_agent.wait.duration', { kind: 'question', outcome: 'accept' }),
      'the question wait duration',
      { timeoutMs: 60_000 },
    );
    await until(() => pending('question') === 0, 'no question pending in the metrics', { timeoutMs: 60_000 });
    expect(latest('durable_agent.waits.started', { kind: 'question' })?.value).toBe(1);
    expect(duration.value).toBe(1);
    expect(duration.sum).toBeGreaterThanOrEqual(1);
    // The approval's wait is still counted once: a second kind does not touch the first.
    expect(latest('durable_agent.wait.duration', { kind: 'approval', outcome: 'approved' })?.value).toBe(1);
  }, 180_000);

  it('waits: a continue-as-new is a wait by its reason, counted and timed like the waits for a person', async () => {
    const id = `rollover-${randomUUID()}`;
    await expect(agent.ask(id, 'Roll over.', { settings: { maxTurnsPerRun: 1 } })).resolves.toMatchObject({
      answer: 'Rolled.',
    });
    const duration = await until(
      () => latest('durable_agent.wait.duration', { kind: 'continue_as_new', outcome: 'continued' }),
      'the continue-as-new wait duration',
      { timeoutMs: 60_000 },
    );
    expect(duration.value).toBe(1);
    expect(duration.sum).toBeGreaterThanOrEqual(0);
    await until(() => pending('continue_as_new') === 0, 'no continue-as-new pending', { timeoutMs: 60_000 });
    expect(latest('durable_agent.waits.started', { kind: 'continue_as_new' })?.value).toBe(1);
  }, 180_000);

  it("tenants: a tenant's model calls carry durable_agent.tenant in their metrics", async () => {
    await agent.ask(`tenant-${randomUUID()}`, 'Count me for acme.', { settings: { tenant: 'acme' } });
    await until(
      () => latest('gen_ai.client.operation.duration', { 'durable_agent.tenant': 'acme', outcome: 'ok' }) !== undefined,
      'a model call duration of tenant acme',
    );
    expect(
      latest('gen_ai.client.token.usage', { 'durable_agent.tenant': 'acme', 'gen_ai.token.type': 'input' }),
    ).toBeDefined();
  });

  it('logs: a workflow log line carries the trace_id and span_id of the turn it was logged in', async () => {
    const id = `traced-${randomUUID()}`;
    await expect(agent.ask(id, 'Trace me.')).resolves.toMatchObject({ answer: 'Traced.' });
    const turn = await until(
      () => receiver.spans.find((span) => span.name === 'turn 1' && span.attributes['gen_ai.conversation.id'] === id),
      'the turn span',
      { timeoutMs: 60_000 },
    );
    const line = await until(
      () =>
        readFileSync(logFile, 'utf8')
          .split(/\n(?=\S)/)
          .find((entry) => entry.includes('turn finished') && entry.includes(`conversation-${id}`)),
      "the turn's log line",
      { timeoutMs: 30_000 },
    );
    expect(line).toContain(`trace_id: '${turn.traceId}'`);
    expect(line).toContain(`span_id: '${turn.spanId}'`);
  }, 180_000);
});
