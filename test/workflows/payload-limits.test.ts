import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/server';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/config/index.js';
import {
  jsonBytes,
  MAX_PART_BYTES,
  MAX_TOOL_RESULT_CHARS,
  TEMPORAL_PAYLOAD_WARN_BYTES,
} from '../../src/shared/payload-limits.js';
import type { ChatMessage, ModelCallInput, ToolMessage } from '../../src/shared/types.js';
import { startTestAgent, type TestAgentOptions } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { serveMcpOverHttp, type ServedMcp } from '../../src/testing/mcp-http.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import type { ConversationOutcome, ConversationSettings, TurnResult } from '../../src/workflows/definitions.js';
import { transcriptQuery } from '../../src/workflows/definitions.js';
import { httpServer } from '../mcp/helpers.js';

/**
 * Payloads of megabytes from a model or an MCP server, through real turns on the dev server: its payload limit is the
 * real one (2 MiB; the worker reads it from the namespace and refuses larger results). The time-skipping test server
 * reports no limit, so there nothing larger is ever refused, and these tests would prove nothing.
 */

const EventType = temporal.api.enums.v1.EventType;

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;
let wide: ServedMcp;

beforeAll(async () => {
  env = await createLocalEnvironment();
  mcp = await startTestMcpServer({ transport: 'http' });
  // A server whose one tool has a schema of 700 KB, beside a normal tool.
  wide = await serveMcpOverHttp(() => {
    const server = new McpServer({ name: 'wide', version: '1.0.0' });
    server.registerTool(
      'huge',
      {
        description: 'A tool with an enormous schema.',
        inputSchema: z.object({ text: z.string().describe('h'.repeat(700_000)) }),
      },
      async () => ({ content: [{ type: 'text', text: 'huge' }] }),
    );
    server.registerTool(
      'small',
      { description: 'A normal tool.', inputSchema: z.object({ text: z.string() }) },
      async ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    return server;
  });
});

afterAll(async () => {
  await wide?.close();
  await mcp?.close();
  await env?.teardown();
});

interface Turn {
  result: TurnResult;
  messages: ChatMessage[];
  history: temporal.api.history.v1.IHistory;
  /** What reached the scripted model, request by request (OpenAI wire format). */
  requests: { messages: { role: string; content?: unknown }[]; tools?: { function: { name: string } }[] }[];
  /** Every line the worker process wrote to stderr (the worker's log) while the turn ran. */
  log: string;
}

/** One turn with an agent of its own, on the shared dev server and MCP servers; everything it started is stopped. */
async function runTurn(options: Omit<TestAgentOptions, 'env'>, settings: ConversationSettings = {}): Promise<Turn> {
  const agent = await startTestAgent({ env, mcpServers: [httpServer('test', mcp.url)], ...options });
  const stderr = vi.spyOn(process.stderr, 'write');
  try {
    const handle = await agent.startConversation(randomUUID(), {
      messages: [{ id: randomUUID(), content: 'go' }],
      settings,
      closeWhenIdle: true,
    });
    const outcome = (await handle.result()) as ConversationOutcome;
    const page = await handle.query(transcriptQuery, { from: 0, limit: 100 });
    return {
      result: outcome.state.lastResult!,
      messages: page.messages,
      history: await handle.fetchHistory(),
      requests: agent.model.requests as unknown as Turn['requests'],
      log: stderr.mock.calls.map(([chunk]) => String(chunk)).join(''),
    };
  } finally {
    stderr.mockRestore();
    await agent.close();
  }
}

function toolMessages(turn: Turn): ToolMessage[] {
  return turn.messages.filter((message): message is ToolMessage => message.role === 'tool');
}

/** Bytes of every activity input and result the turn recorded, by event type. */
function activityPayloadSizes(history: temporal.api.history.v1.IHistory): { scheduled: number[]; completed: number[] } {
  const size = (payloads: temporal.api.common.v1.IPayloads | null | undefined) =>
    (payloads?.payloads ?? []).reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0);
  const events = history.events ?? [];
  return {
    scheduled: events
      .filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      .map((event) => size(event.activityTaskScheduledEventAttributes?.input)),
    completed: events
      .filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
      .map((event) => size(event.activityTaskCompletedEventAttributes?.result)),
  };
}

function failedActivities(history: temporal.api.history.v1.IHistory): number {
  return (history.events ?? []).filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED).length;
}

/** The inputs of the model calls, as the workflow recorded them. */
function modelCallInputs(history: temporal.api.history.v1.IHistory): ModelCallInput[] {
  return (history.events ?? [])
    .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
    .map((event) => {
      const data = event.activityTaskScheduledEventAttributes?.input?.payloads?.[0]?.data;
      return JSON.parse(Buffer.from(data!).toString('utf8')) as ModelCallInput;
    });
}

const MARKER = /\n…\[truncated: (\d+) of (\d+) characters shown\]$/;

describe('payload limits on the dev server', () => {
  it('a 2.5 MB tool result, with a setting larger than any payload, reaches the model cut to fit, with the marker', async () => {
    const callsBefore = mcp.counters.calls.big ?? 0;
    const turn = await runTurn({
      // Programmatic settings are not validated like the environment variable: the bound holds anyway.
      workerOptions: { toolResultMaxChars: 3_000_000 },
      script: [{ toolCalls: [{ name: 'test__big', arguments: { chars: 2_500_000 } }] }, { content: 'done' }],
    });

    expect(turn.result).toMatchObject({ stopReason: 'completed', answer: 'done', toolCalls: 1 });
    const [message] = toolMessages(turn);
    expect(message?.outcome).toBe('ok');
    expect(message?.content).toMatch(/^0123456789/);
    expect(MARKER.exec(message!.content)?.[2]).toBe('2500000');
    expect(jsonBytes(message!.content)).toBeLessThanOrEqual(MAX_PART_BYTES);
    // The model read it: the worker fetched the large message by query rather than the model call carrying it again.
    expect(turn.requests[1]?.messages.at(-1)?.content).toBe(message!.content);
    expect(modelCallInputs(turn.history)[1]?.newMessages).toEqual([]);
    // Nothing was refused or retried, and every payload stayed under Temporal's warning.
    expect(failedActivities(turn.history)).toBe(0);
    const sizes = activityPayloadSizes(turn.history);
    expect(Math.max(...sizes.scheduled, ...sizes.completed)).toBeLessThan(TEMPORAL_PAYLOAD_WARN_BYTES);
    expect((mcp.counters.calls.big ?? 0) - callsBefore).toBe(1);
    expect(turn.log).toContain('The result of test__big was cut to 508.0 KiB to fit a Temporal payload');
  });

  it('at the setting’s maximum, a result of emoji is cut by bytes, never inside one, and stays under the warning', async () => {
    const config = loadConfig({ DURABLE_AGENT_TOOL_RESULT_MAX_CHARS: String(MAX_TOOL_RESULT_CHARS) });
    const turn = await runTurn({
      workerOptions: { toolResultMaxChars: config.toolResultMaxChars },
      script: [{ toolCalls: [{ name: 'test__big', arguments: { chars: 600_000, unit: '😀' } }] }, { content: 'done' }],
    });

    expect(turn.result).toMatchObject({ stopReason: 'completed', answer: 'done' });
    const [message] = toolMessages(turn);
    expect(message?.outcome).toBe('ok');
    const shown = Number(MARKER.exec(message!.content)?.[1]);
    expect(message!.content.slice(0, shown)).toBe('😀'.repeat(shown / 2));
    expect(jsonBytes(message!.content)).toBeLessThanOrEqual(MAX_PART_BYTES);
    expect(failedActivities(turn.history)).toBe(0);
    const sizes = activityPayloadSizes(turn.history);
    expect(Math.max(...sizes.scheduled, ...sizes.completed)).toBeLessThan(TEMPORAL_PAYLOAD_WARN_BYTES);
  });

  it('a model answer of 3 MB is cut with a marker: the turn completes, with no refused result and no retry', async () => {
    // One word, so the scripted model streams it in one chunk.
    const turn = await runTurn({ script: [{ content: 'x'.repeat(3_000_000) }] });

    expect(turn.result.stopReason).toBe('completed');
    expect(turn.result.answer).toMatch(/^x+\n…\[truncated: \d+ of 3000000 characters shown\]$/);
    expect(jsonBytes(turn.result.answer)).toBeLessThanOrEqual(MAX_PART_BYTES);
    expect(turn.requests).toHaveLength(1);
    expect(failedActivities(turn.history)).toBe(0);
    expect(turn.log).toContain("The model's answer takes more than the 508.0 KiB a Temporal payload may carry here");
  });

  it('tool call arguments of 3 MB: the call is not run, the model is told their size, and the turn goes on', async () => {
    const turn = await runTurn(
      {
        script: [
          {
            toolCalls: [{ name: 'test__echo', arguments: { text: 'y'.repeat(3_000_000) } }],
            // The scripted model would count 750,000 tokens (one per 4 characters), past the turn's token budget.
            usage: { prompt_tokens: 100, completion_tokens: 100 },
          },
          { content: 'I will send less.' },
        ],
      },
      // Not streamed: the scripted model streams arguments 8 characters a chunk, which for 3 MB takes seconds.
      { stream: false },
    );

    expect(turn.result).toMatchObject({ stopReason: 'completed', answer: 'I will send less.' });
    const [message] = toolMessages(turn);
    expect(message?.outcome).toBe('invalid_arguments');
    expect(message?.content).toContain('the arguments for test__echo (2.9 MiB) did not fit');
    expect(turn.requests[1]?.messages.at(-1)?.content).toBe(message?.content);
    expect(mcp.counters.calls.echo).toBeUndefined();
    expect(failedActivities(turn.history)).toBe(0);
  });

  it('a tool list over the bound leaves its largest tool out; the model is offered the rest and the turn goes on', async () => {
    const turn = await runTurn({
      mcpServers: [httpServer('wide', wide.url), httpServer('test', mcp.url)],
      script: [{ content: 'no tools needed' }],
    });

    expect(turn.result).toMatchObject({ stopReason: 'completed', answer: 'no tools needed' });
    const offered = turn.requests[0]?.tools?.map((tool) => tool.function.name) ?? [];
    expect(offered).toContain('wide__small');
    expect(offered).toContain('test__echo');
    expect(offered).not.toContain('wide__huge');
    expect(failedActivities(turn.history)).toBe(0);
    expect(turn.log).toMatch(/Left 1 of \d+ tools out of the turn/);
    expect(turn.log).toContain('wide__huge');
  });
});
