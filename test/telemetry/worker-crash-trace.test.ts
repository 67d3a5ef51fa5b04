import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { clientTelemetryInterceptors, startTelemetry, type Telemetry } from '../../src/worker/telemetry/index.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { callsPerTool, requireBuild, until, WorkerProcess, writeMcpConfig } from '../reliability/helpers.js';
import { closeWorkerBed } from './close-worker-bed.js';
import { spanTree } from './span-tree.js';

/**
 * A turn resumed after its worker is killed is still one trace: the worker runs as users run it (`durable-agent worker`,
 * its own process, with OTEL_EXPORTER_OTLP_ENDPOINT set, exporting OTLP/protobuf), is SIGKILLed while a tool runs, and a
 * second worker replays the workflow and finishes the turn. The replay exports nothing again; the turn's span, ended
 * by the second worker, keeps the ids it had and its place under the client's call. The workers' Temporal Runtime
 * exports the metrics to the same receiver.
 */

const SLOW_MS = 8_000;
let env: TestWorkflowEnvironment;
let receiver: OtlpReceiver;
let telemetry: Telemetry;
let model: ScriptedModel;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'otel-crash-'));
const counterFile = path.join(tmp, 'calls.jsonl');
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  requireBuild();
  receiver = await startOtlpReceiver();
  telemetry = startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })!;
  model = await startScriptedModel({
    script: [{ toolCalls: [{ name: 'test__slow', arguments: { delayMs: SLOW_MS } }] }, { content: 'Slept well.' }],
  });
  env = await createLocalEnvironment();
});

afterAll(() => closeWorkerBed({ workers, counterFile, env, model, telemetry, receiver, tmp }));

async function startWorker(taskQueue: string, name: string): Promise<WorkerProcess> {
  const mcpConfigPath = path.join(tmp, 'mcp.json');
  writeMcpConfig(mcpConfigPath, counterFile);
  const worker = await WorkerProcess.start({
    temporalAddress: env.address,
    taskQueue,
    modelBaseUrl: model.baseUrl,
    mcpConfigPath,
    logFile: path.join(tmp, `${name}.log`),
    extraEnvironment: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'agent-worker',
      // Export at once: what the first worker ended before the kill reaches the receiver.
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRIC_EXPORT_INTERVAL: '500',
    },
  });
  workers.push(worker);
  return worker;
}

const named = (spans: ReceivedSpan[], prefix: string) => spans.filter((span) => span.name.startsWith(prefix));

describe('tracing across a worker crash', () => {
  it('traces: a turn resumed after SIGKILL of its worker is one trace, with one turn span', async () => {
    const taskQueue = `otel-crash-${randomUUID()}`;
    const first = await startWorker(taskQueue, 'first');
    const client = new Client({
      connection: env.connection,
      namespace: env.namespace ?? 'default',
      interceptors: { workflow: clientTelemetryInterceptors(telemetry) },
    });
    const answer = new DurableAgentClient({ client, taskQueue }).ask(`crash-${randomUUID()}`, 'Take a nap.');
    await until(() => (callsPerTool(counterFile).slow ?? 0) >= 1, 'the slow tool to start');
    await first.kill();
    await startWorker(taskQueue, 'second');
    const result = await answer;
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Slept well.', toolCalls: 1 });
    await telemetry.tracing!.flush();
    const turn = await until(() => named(receiver.spans, 'turn ')[0], 'the turn span', { timeoutMs: 60_000 });
    expect(receiver.refused).toEqual([]);
    expect(named(receiver.spans, 'turn ')).toHaveLength(1);
    const spans = receiver.spans.filter((span) => span.traceId === turn.traceId);
    console.log(spanTree(spans));
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const root = spans.find((span) => span.parentSpanId === '' && /Update/.test(span.name));
    expect(root?.serviceName).toBe('durable-agent');
    expect(turn.parentSpanId).toBe(root!.spanId);
    expect(turn.serviceName).toBe('agent-worker');
    // The tool's retry on the second worker, and the model's answer after it, are in the client's trace, under the turn.
    const slow = named(spans, 'execute_tool test__slow');
    expect(slow.map((span) => span.attributes['durable_agent.attempt'])).toContain(2);
    const chats = named(spans, 'chat ');
    // The second round's call ran on the second worker; the first worker's spans of round 1 reach the receiver if its
    // batch left before the kill (a span still in a batch dies with its process), so they are not counted on.
    expect(chats.map((span) => span.attributes['durable_agent.round'])).toContain(2);
    for (const call of [...slow, ...chats]) {
      expect(byId.get(byId.get(call.spanId)!.parentSpanId)?.parentSpanId).toBe(turn.spanId);
    }
    // One model call per round reached the model: the replay on the second worker sent none again.
    expect(model.requests.map((request) => request.status)).toEqual([200, 200]);
    // Real time: two worker starts, a retry backoff, and the heartbeat timeout (10 s) that notices the dead worker.
  }, 300_000);

  it('metrics: a worker exports the turn, model and tool metrics next to the Temporal Runtime metrics', async () => {
    const taskQueue = `otel-metrics-${randomUUID()}`;
    await startWorker(taskQueue, 'metrics');
    const client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
    const result = await new DurableAgentClient({ client, taskQueue }).ask(
      `metrics-${randomUUID()}`,
      'Take another nap.',
    );
    expect(result).toMatchObject({ stopReason: 'completed', toolCalls: 1 });
    // Metrics are exported every half second: the turn's count comes with one of the next exports.
    await until(() => receiver.metrics.some((point) => /durable_agent.turns$/.test(point.name)), 'the turn metric', {
      timeoutMs: 60_000,
    });
    expect(receiver.refused).toEqual([]);
    expect(receiver.metrics).toContainEqual(
      expect.objectContaining({
        name: expect.stringMatching(/durable_agent.turns$/),
        attributes: expect.objectContaining({ stop_reason: 'completed' }),
      }),
    );
    const names = [...new Set(receiver.metrics.map((point) => point.name))];
    expect(names).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/durable_agent.turn.duration$/),
        expect.stringMatching(/gen_ai.client.operation.duration$/),
        expect.stringMatching(/gen_ai.client.token.usage$/),
        expect.stringMatching(/durable_agent.tool.duration$/),
        expect.stringMatching(/^temporal_workflow_task_execution_latency/),
      ]),
    );
  }, 180_000);
});
