import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import type { AskOptions } from '../../src/client/types.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { CACHED_USAGE, CACHED_USAGE_USD, CLAUDE_PRICES } from '../helpers/cached-usage.js';
import { FailureType } from '../../src/shared/errors.js';
import { clientTelemetryInterceptors, startTelemetry, type Telemetry } from '../../src/worker/telemetry/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { spanTree } from './span-tree.js';

/**
 * One turn, traced for real: the client, the workflow and the activities export to an OTLP/HTTP receiver started here
 * (http/json, as `OTEL_EXPORTER_OTLP_PROTOCOL=http/json` asks), and the spans make one tree from the client's call.
 * On the dev server, in real time: the model's retry waits Temporal's first backoff, a second.
 */

/** What the file starts once: the receiver, the process's telemetry, the CRM's MCP server and a dev server. */
interface Bed {
  receiver: OtlpReceiver;
  telemetry: Telemetry;
  crm: Crm;
  env: TestWorkflowEnvironment;
}
const agents: TestAgent[] = [];
let bed: Partial<Bed> = {};

beforeAll(async () => {
  const receiver = await startOtlpReceiver();
  bed = {
    receiver,
    telemetry: startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
  };
  bed.crm = await startCrm();
  bed.env = await createLocalEnvironment();
});

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.close()));
  await bed.env?.teardown();
  await bed.crm?.close();
  await bed.telemetry?.tracing?.shutdown();
  await bed.receiver?.close();
});

/** Ask through a client with the tracing interceptor, as `DurableAgentClient.connect` makes it with OTEL_* set. */
async function tracedAsk(taskQueue: string, text: string, options: AskOptions = {}) {
  const { env, telemetry } = bed as Bed;
  const client = new Client({
    connection: env.connection,
    namespace: env.namespace ?? 'default',
    interceptors: { workflow: clientTelemetryInterceptors(telemetry) },
  });
  const agent = new DurableAgentClient({ client, taskQueue });
  return await agent.ask(`traced-${randomUUID()}`, text, options);
}

const named = (spans: ReceivedSpan[], prefix: string) => spans.filter((span) => span.name.startsWith(prefix));

describe('tracing a turn', () => {
  it('traces: a two-tool turn with one model retry is one tree from the client call through every model and tool call', async () => {
    const { env, crm, receiver, telemetry } = bed as Bed;
    const agent = await startTestAgent({
      env,
      mcpServers: [crm.config()],
      // A price for the scripted model, so each model call's span carries what it cost.
      workerOptions: { telemetry, prices: new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } }) },
      script: [
        { error: { status: 500 } },
        {
          toolCalls: [
            { name: 'crm__find_user', arguments: { name: 'Ada' } },
            { name: 'crm__get_company', arguments: { companyId: 'c-9' } },
          ],
          usage: { prompt_tokens: 120, completion_tokens: 12 },
        },
        { content: 'Ada works at Analytical Engines Ltd.', usage: { prompt_tokens: 200, completion_tokens: 9 } },
      ],
    });
    agents.push(agent);
    // The worker's Runtime logger writes to stderr (test/setup-runtime.ts): its lines are read as written.
    const stderr = vi.spyOn(process.stderr, 'write');
    const result = await tracedAsk(agent.taskQueue, 'Where does Ada work?');
    const logged = stderr.mock.calls.map(([chunk]) => String(chunk));
    stderr.mockRestore();
    expect(result).toMatchObject({ stopReason: 'completed', rounds: 2, toolCalls: 2 });
    await telemetry.tracing!.flush();

    expect(receiver.refused).toEqual([]);
    const [turn, ...otherTurns] = named(receiver.spans, 'turn ');
    expect(otherTurns).toEqual([]);
    const spans = receiver.spans.filter((span) => span.traceId === turn!.traceId);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId);

    // The root is the client's call; the turn continues the client's trace, not only the workflow run's.
    const roots = spans.filter((span) => span.parentSpanId === '');
    expect(roots.map((span) => span.name)).toEqual([expect.stringMatching(/Update/)]);
    expect(parentOf(turn!)).toBe(roots[0]);
    expect(turn!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'durable_agent.turn': 1,
      'durable_agent.stop_reason': 'completed',
      'durable_agent.rounds': 2,
      'durable_agent.tool_calls': 2,
      'gen_ai.usage.input_tokens': 320,
      'gen_ai.usage.output_tokens': 21,
    });

    // Each model and tool call hangs under Temporal's RunActivity span, which hangs under the turn.
    const chats = named(spans, 'chat ').sort((a, b) => Number(a.startNanos - b.startNanos));
    const tools = named(spans, 'execute_tool ');
    for (const call of [...chats, ...tools]) {
      expect(parentOf(call)?.name).toMatch(/^RunActivity:call(Model|Tool)$/);
      expect(parentOf(parentOf(call)!)).toBe(turn);
    }
    expect(
      chats.map((chat) => [chat.attributes['durable_agent.round'], chat.attributes['durable_agent.attempt']]),
    ).toEqual([
      [1, 1],
      [1, 2],
      [2, 1],
    ]);
    expect(chats[0]!.statusCode).toBe(2);
    expect(chats[0]!.attributes['error.type']).toBe(FailureType.ModelServerError);
    expect(chats[1]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.response.model': expect.any(String),
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 12,
      'gen_ai.response.finish_reasons': ['tool_calls'],
    });
    // 120 input tokens at $1 and 12 output tokens at $2 per million.
    expect(chats[1]!.attributes['durable_agent.cost.usd']).toBeCloseTo(0.000144, 9);
    expect(tools.map((tool) => tool.attributes['gen_ai.tool.name']).sort()).toEqual([
      'crm__find_user',
      'crm__get_company',
    ]);
    for (const tool of tools) {
      expect(tool.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.call.id': expect.any(String),
        'durable_agent.tool.server': 'crm',
        'durable_agent.tool.outcome': 'ok',
      });
    }
    // The failed attempt's log line leads to its conversation, turn, round and trace.
    const failed = logged.find((line) => line.includes('Activity failed') && line.includes(result.conversationId));
    expect(failed).toBeDefined();
    for (const id of [
      `turn: 1`,
      `round: 1`,
      `trace_id: '${turn!.traceId}'`,
      `conversation_id: '${result.conversationId}'`,
    ]) {
      expect(failed).toContain(id);
    }
    // No content unless the operator turns it on.
    for (const span of spans) {
      expect(Object.keys(span.attributes).filter((key) => /messages|arguments|result/.test(key))).toEqual([]);
    }
    console.log(spanTree(spans));
  });

  it("traces: an Anthropic call's span names its provider and model apart, with its cache, reasoning and cost", async () => {
    const { env, receiver, telemetry } = bed as Bed;
    const prices = new PriceTable(CLAUDE_PRICES);
    const agent = await startTestAgent({
      env,
      workerOptions: { telemetry, prices },
      script: [{ content: 'Hello.', usage: CACHED_USAGE }],
    });
    agents.push(agent);

    const result = await tracedAsk(agent.taskQueue, 'Hello?', { settings: { model: 'anthropic:claude-scripted' } });
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Hello.' });
    await telemetry.tracing!.flush();

    const chats = named(receiver.spans, 'chat ').filter(
      (span) => span.attributes['gen_ai.conversation.id'] === result.conversationId,
    );
    expect(chats.map((chat) => chat.name)).toEqual(['chat claude-scripted']);
    expect(chats[0]!.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-scripted',
      'gen_ai.usage.input_tokens': 3_400,
      'gen_ai.usage.output_tokens': 100,
      'gen_ai.usage.cache_read.input_tokens': 2_000,
      'gen_ai.usage.cache_creation.input_tokens': 400,
      'gen_ai.usage.reasoning.output_tokens': 40,
    });
    expect(chats[0]!.attributes['durable_agent.cost.usd']).toBeCloseTo(CACHED_USAGE_USD, 12);
  });
});
