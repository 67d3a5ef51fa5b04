import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCallInput, ModelCallResult } from '../../src/shared/types.js';
import { startTestAgent, type TestAgentOptions } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import type { ScriptStep } from '../../src/testing/scripted-model/index.js';
import { askUpdate, endSignal } from '../../src/workflows/definitions.js';
import { MAX_CARRIED_TRANSCRIPT_CHARS } from '../../src/workflows/conversation-state.js';
import { RUN_HISTORY_BYTES } from '../../src/workflows/run-size.js';
import { httpServer } from '../mcp/helpers.js';

/**
 * Each byte once in history (docs/architecture.md, "Each byte once in history"): a tool result is recorded as its call's activity result
 * and nowhere else, and the tool list only when it changed since the conversation recorded it. On the dev server, with
 * our test MCP server's `big` tool, as a conversation with large tool results runs.
 */

const EventType = temporal.api.enums.v1.EventType;
/** A 50 KB file, as the benchmark's `read_text_file` returns it (docs/benchmarks.md, "Long conversations"). */
const RESULT_CHARS = 51_200;
const CALLS = 4;

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;

beforeAll(async () => {
  env = await createLocalEnvironment();
  mcp = await startTestMcpServer({ transport: 'http' });
});

afterAll(async () => {
  await mcp?.close();
  await env?.teardown();
});

interface Recorded {
  bytes: number;
  /** The bytes of every payload the history holds (inputs, results, signals…): what the workflow recorded. */
  payloadBytes: number;
  events: number;
  modelInputs: ModelCallInput[];
  modelResults: ModelCallResult[];
  /** What reached the scripted model, request by request. */
  requests: { messages: { role: string; content?: unknown }[]; tools?: unknown[] }[];
}

/** `turns` turns of a conversation of its own agent; returns its history and what reached the model. */
async function converse(
  script: ScriptStep[],
  turns: number,
  workerOptions: TestAgentOptions['workerOptions'] = {},
): Promise<Recorded> {
  const agent = await startTestAgent({
    env,
    script,
    mcpServers: [httpServer('test', mcp.url)],
    workerOptions: { toolResultMaxChars: 60_000, ...workerOptions },
  });
  try {
    const handle = await agent.startConversation(randomUUID(), { settings: { stream: false } });
    for (let turn = 1; turn <= turns; turn++) {
      const result = await handle.executeUpdate(askUpdate, { args: [{ id: `m-${turn}`, content: `turn ${turn}` }] });
      expect(result.stopReason).toBe('completed');
    }
    // Measured before the run closes: its result carries the transcript to a run that reopens the conversation, as
    // continue-as-new does (a cost per run, not per step; docs/benchmarks.md, "Long conversations").
    const history = await handle.fetchHistory();
    await handle.signal(endSignal);
    await handle.result();
    return {
      bytes: temporal.api.history.v1.History.encode(temporal.api.history.v1.History.fromObject(history)).finish()
        .length,
      payloadBytes: payloadBytes(history),
      events: history.events?.length ?? 0,
      modelInputs: payloadsOf(history, 'callModel', 'input') as ModelCallInput[],
      modelResults: payloadsOf(history, 'callModel', 'result') as ModelCallResult[],
      requests: agent.model.requests as unknown as Recorded['requests'],
    };
  } finally {
    await agent.close();
  }
}

/** The decoded inputs or results of every activity of type `activity` in the history, in order. */
function payloadsOf(history: temporal.api.history.v1.IHistory, activity: string, what: 'input' | 'result'): unknown[] {
  const scheduled = new Map<string, unknown>();
  const found: unknown[] = [];
  const decode = (payloads: temporal.api.common.v1.IPayloads | null | undefined): unknown =>
    JSON.parse(Buffer.from(payloads!.payloads![0]!.data!).toString('utf8'));
  for (const event of history.events ?? []) {
    const attributes = event.activityTaskScheduledEventAttributes;
    if (
      event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
      attributes?.activityType?.name === activity
    ) {
      scheduled.set(String(event.eventId), attributes.input);
      if (what === 'input') found.push(decode(attributes.input));
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (what === 'result' && completed && scheduled.has(String(completed.scheduledEventId))) {
      found.push(decode(completed.result));
    }
  }
  return found;
}

/** A turn of `calls` parallel calls of `big` for `chars` characters each, then an answer. */
function bigTurn(chars: number, calls = CALLS): ScriptStep[] {
  const call = { name: 'test__big', arguments: { chars } };
  return [{ toolCalls: Array.from({ length: calls }, () => call) }, { content: `read ${calls} files` }];
}

describe('each byte once in history', () => {
  it('a tool turn with 50 KB results adds at most 1.15x the results to history, and the model still reads them', async () => {
    // The same turn with tiny results: the difference is what the results themselves cost in history.
    const small = await converse(bigTurn(10), 1);
    const large = await converse(bigTurn(RESULT_CHARS), 1);

    const ratio = (large.bytes - small.bytes) / (CALLS * RESULT_CHARS);
    console.log(
      `history of a turn of ${CALLS} calls: ${small.bytes} B with 10-character results, ${large.bytes} B with ` +
        `${RESULT_CHARS}-character ones: ${ratio.toFixed(3)}x the results`,
    );
    expect(ratio).toBeLessThanOrEqual(1.15);
    // The model call after the round names the results (its prefix) instead of carrying them.
    expect(large.modelInputs[1]?.newMessages).toEqual([]);
    expect(large.modelInputs[1]?.prefix.count).toBe(1 + 1 + CALLS);
    const seen = large.requests[1]!.messages.filter((message) => message.role === 'tool');
    expect(seen.map((message) => (message.content as string).length)).toEqual(Array(CALLS).fill(RESULT_CHARS));
  });

  it('a model call on a worker that did not keep the results reads them from the workflow, and history is the same', async () => {
    const held = await converse(bigTurn(RESULT_CHARS), 1);
    const queried = await converse(bigTurn(RESULT_CHARS), 1, { toolResults: false });

    expect(queried.modelInputs[1]?.newMessages).toEqual([]);
    // The same messages reached the model (the scripted model makes up new call ids for each conversation).
    const shape = (recorded: Recorded) =>
      recorded.requests[1]?.messages.map(({ role, content }) => [role, typeof content === 'string' ? content : null]);
    expect(shape(queried)).toEqual(shape(held));
    expect(queried.requests[1]?.messages.filter((message) => message.role === 'tool')).toHaveLength(CALLS);
    // The same was recorded: the payloads differ only in ids and numbers (durations, timestamps), not by one result.
    // Not the history's bytes, which a busy machine changes (a timed-out workflow task adds events, no payload).
    console.log(
      `payload bytes: ${held.payloadBytes} held, ${queried.payloadBytes} queried; history bytes: ${held.bytes}, ${queried.bytes}`,
    );
    expect(Math.abs(queried.payloadBytes - held.payloadBytes)).toBeLessThan(512);
  });

  it('the tool list is recorded by the first turn only while it stays the same, and offered to the model every turn', async () => {
    const turns = 3;
    const script = Array.from({ length: turns }, () => bigTurn(10, 1)).flat();
    const recorded = await converse(script, turns);

    const setups = recorded.modelResults.flatMap((result) => (result.turnSetup ? [result.turnSetup] : []));
    expect(setups).toHaveLength(turns);
    expect(setups[0]?.tools?.map((tool) => tool.name)).toContain('test__big');
    for (const later of setups.slice(1)) {
      expect(later.tools).toBeUndefined();
      expect(later.toolsDigest).toMatch(/^[0-9a-f]{16}$/);
    }
    // Each turn's first model call lists the tools (two calls a turn) and was offered them all.
    const offered = recorded.requests.filter((_, index) => index % 2 === 0).map((request) => request.tools?.length);
    expect(offered).toEqual(Array(turns).fill(setups[0]!.tools!.length));
    expect(recorded.modelInputs.filter((input) => input.listTools).map((input) => input.knownToolsDigest)).toEqual([
      undefined,
      setups[1]!.toolsDigest,
      setups[1]!.toolsDigest,
    ]);
  });

  it('a run continues as new between turns once its history passes 1 MB, so every run stays under 5% of 50 MB', async () => {
    const turns = 9;
    const agent = await startTestAgent({
      env,
      script: Array.from({ length: turns }, () => bigTurn(RESULT_CHARS)).flat(),
      mcpServers: [httpServer('test', mcp.url)],
      workerOptions: { toolResultMaxChars: 60_000 },
    });
    try {
      const handle = await agent.startConversation(randomUUID(), { settings: { stream: false } });
      for (let turn = 1; turn <= turns; turn++) {
        const result = await handle.executeUpdate(askUpdate, { args: [{ id: `m-${turn}`, content: `turn ${turn}` }] });
        expect(result.stopReason).toBe('completed');
      }
      const sizes: number[] = [];
      let runId: string | undefined = (await handle.describe()).runId;
      while (runId) {
        const history = await env.client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
        sizes.unshift(
          temporal.api.history.v1.History.encode(temporal.api.history.v1.History.fromObject(history)).finish().length,
        );
        runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
      }
      console.log(`history bytes of each run of a ${turns}-turn conversation: ${sizes.join(', ')}`);
      // About 205 KB a turn: the first run rolled over after the turn that took it past its share, carrying the
      // newest turns' transcript to the next.
      expect(sizes.length).toBeGreaterThanOrEqual(2);
      expect(sizes[0]).toBeGreaterThan(RUN_HISTORY_BYTES);
      const bound = RUN_HISTORY_BYTES + MAX_CARRIED_TRANSCRIPT_CHARS + 2 * CALLS * RESULT_CHARS;
      for (const size of sizes) expect(size).toBeLessThan(bound);
    } finally {
      await agent.close();
    }
  });
});

/** The data bytes of every payload anywhere in a history's events. */
function payloadBytes(value: unknown): number {
  if (value instanceof Uint8Array || value === null || typeof value !== 'object') return 0;
  if ('data' in value && value.data instanceof Uint8Array && 'metadata' in value) return value.data.length;
  return Object.values(value).reduce<number>((sum, inner) => sum + payloadBytes(inner), 0);
}
