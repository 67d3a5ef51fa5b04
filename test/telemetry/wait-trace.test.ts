import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { startTelemetry, type Telemetry } from '../../src/worker/telemetry/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { WAIT_REASONS } from '../../src/workflows/wait-metrics.js';
import { poll, ScriptBook } from '../client/helpers.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { httpServer } from '../mcp/helpers.js';
import { until } from '../reliability/helpers.js';
import { spanTree } from './span-tree.js';

/**
 * A conversation's pauses, traced for real (docs/observability.md, "Waits"): waiting for a person's approval, for an
 * answer to a server's question, a continue-as-new and a move to a new Worker Deployment Version each open a
 * `wait <reason>` span and close it with its outcome. Dev server, real time, spans to an OTLP/HTTP receiver.
 */

interface Bed {
  receiver: OtlpReceiver;
  telemetry: Telemetry;
  crm: Crm;
  mcp: RunningTestMcpServer;
  model: ScriptedModel;
  env: TestWorkflowEnvironment;
}
let bed: Partial<Bed> = {};
const agents: TestAgent[] = [];
const book = new ScriptBook('waits');

beforeAll(async () => {
  const receiver = await startOtlpReceiver();
  bed = {
    receiver,
    telemetry: startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
  };
  bed.crm = await startCrm();
  // 2025-11-25 only: the question comes through the `requestInput` update, outside the turn's own code.
  bed.mcp = await startTestMcpServer({ transport: 'http', legacyOnly: true });
  bed.model = await startScriptedModel({ script: book.script });
  bed.env = await createLocalEnvironment();
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.close()));
  await bed.env?.teardown();
  await bed.model?.close();
  await bed.mcp?.close();
  await bed.crm?.close();
  await bed.telemetry?.tracing?.shutdown();
  await bed.receiver?.close();
});

async function agentWith(options: Partial<Parameters<typeof startTestAgent>[0]> = {}): Promise<TestAgent> {
  const { env, crm, mcp, model, telemetry } = bed as Bed;
  const agent = await startTestAgent({
    env,
    model,
    mcpServers: [crm.config('crm', { requireApproval: 'writes' }), httpServer('test', mcp.url)],
    ...options,
    workerOptions: { telemetry, ...options.workerOptions },
  });
  agents.push(agent);
  return agent;
}

/** The spans of one conversation's trace(s), once `done` holds for them. */
async function spansOf(conversationId: string, done: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  const { receiver, telemetry } = bed as Bed;
  return await until(
    async () => {
      await telemetry.tracing!.flush();
      const traces = new Set(
        receiver.spans
          .filter((span) => span.attributes['gen_ai.conversation.id'] === conversationId)
          .map((span) => span.traceId),
      );
      const spans = receiver.spans.filter((span) => traces.has(span.traceId));
      return done(spans) && spans;
    },
    'the spans',
    { timeoutMs: 60_000 },
  );
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

describe("a conversation's pauses", () => {
  it('waits: an approval, a question and a continue-as-new each open and close a wait span in the turn or the run', async () => {
    const agent = await agentWith();
    const client = new DurableAgentClient({ client: (bed as Bed).env.client, taskQueue: agent.taskQueue });
    const id = book.conversation('person', [
      { toolCalls: [{ name: 'crm__update_field', arguments: { userId: 'u-1', field: 'plan', value: 'pro' } }] },
      { toolCalls: [{ name: 'test__ask_user', arguments: { message: 'Who are you?' } }] },
      { content: 'Done, Ada.' },
    ]);
    await client.send(id, 'Change my plan.', { settings: { maxTurnsPerRun: 1 } });
    const [approval] = await poll(
      () => client.pendingApprovals(id),
      (calls) => calls.length === 1,
    );
    await client.approve(id, approval!.callId);
    const [question] = await poll(
      () => client.pendingInputs(id),
      (inputs) => inputs.length === 1,
    );
    await client.answerInput(id, question!.requestId, { action: 'accept', content: { name: 'Ada' } });

    // One turn, then the run hands over (maxTurnsPerRun 1): its span ends once the next run has been started.
    const spans = await spansOf(id, (found) => named(found, 'wait continue_as_new').length === 1);
    console.log(spanTree(spans));
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const [turn] = named(spans, 'turn 1');
    const [approvalWait] = named(spans, 'wait approval');
    const [questionWait] = named(spans, 'wait question');
    const [handOver] = named(spans, 'wait continue_as_new');
    expect(byId.get(approvalWait!.parentSpanId)).toBe(turn);
    expect(approvalWait!.attributes).toMatchObject({
      'gen_ai.conversation.id': id,
      'gen_ai.tool.call.id': approval!.callId,
      'gen_ai.tool.name': 'crm__update_field',
      'durable_agent.turn': 1,
      'durable_agent.wait.reason': 'approval',
      'durable_agent.wait.outcome': 'approved',
    });
    // Begun in the `requestInput` update's handler, yet the turn's child.
    expect(byId.get(questionWait!.parentSpanId)).toBe(turn);
    expect(questionWait!.attributes).toMatchObject({
      'gen_ai.conversation.id': id,
      'durable_agent.input.request_id': question!.requestId,
      'gen_ai.tool.name': 'test__ask_user',
      'durable_agent.wait.reason': 'question',
      'durable_agent.wait.outcome': 'accept',
    });
    // Between turns: the run's child, after the turn.
    expect(byId.get(handOver!.parentSpanId)?.name).toBe('RunWorkflow:conversationWorkflow');
    expect(handOver!.startNanos).toBeGreaterThanOrEqual(turn!.endNanos);
    expect(handOver!.attributes).toMatchObject({
      'gen_ai.conversation.id': id,
      'durable_agent.wait.reason': 'continue_as_new',
      'durable_agent.wait.outcome': 'continued',
      'durable_agent.turns': 1,
    });
    for (const wait of [approvalWait!, questionWait!, handOver!]) expect(wait.endNanos).toBeGreaterThan(0n);
  }, 180_000);

  it('waits: a move to a new Worker Deployment Version opens and closes a wait new_version span', async () => {
    const { env } = bed as Bed;
    const deploymentName = `waits-${randomUUID().slice(0, 8)}`;
    const taskQueue = `waits-${randomUUID()}`;
    const setCurrent = (buildId: string) =>
      until(
        () =>
          env.client.workflowService
            .setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName, buildId, identity: 'test' })
            .then(() => true)
            .catch(() => false),
        `version ${buildId} to become current`,
        { timeoutMs: 60_000, intervalMs: 500 },
      );
    await agentWith({ taskQueue, workerOptions: { deploymentVersion: { deploymentName, buildId: 'a' } } });
    await setCurrent('a');
    const client = new DurableAgentClient({ client: env.client, taskQueue });
    const id = book.conversation('version', [{ content: 'On a.' }, { content: 'On b.' }]);
    await expect(client.ask(id, 'First.')).resolves.toMatchObject({ answer: 'On a.' });

    await agentWith({ taskQueue, workerOptions: { deploymentVersion: { deploymentName, buildId: 'b' } } });
    await setCurrent('b');
    // The pinned run moves between turns: after its turn (nothing queued), or at the next message at the latest.
    await expect(client.ask(id, 'Second.')).resolves.toMatchObject({ answer: 'On b.' });

    const spans = await spansOf(id, (found) => named(found, 'wait new_version').length === 1);
    const [move] = named(spans, 'wait new_version');
    expect(move!.attributes).toMatchObject({
      'gen_ai.conversation.id': id,
      'durable_agent.wait.reason': 'new_version',
      'durable_agent.wait.outcome': 'continued',
    });
    expect(named(spans, 'wait continue_as_new')).toEqual([]);
  }, 180_000);

  it('waits: every reason has a description (the one place a new kind of wait is added)', () => {
    expect(Object.keys(WAIT_REASONS)).toEqual(['approval', 'question', 'continue_as_new', 'new_version', 'task']);
  });
});
