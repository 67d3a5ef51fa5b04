import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import {
  boundProgress,
  checkModelResult,
  fitModelAnswer,
  fitToolList,
  fitToolListOnce,
  MAX_PROGRESS_MESSAGE_CHARS,
  type PayloadLog,
} from '../../src/worker/activities/calls/payload-limits.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { FailureType } from '../../src/shared/errors.js';
import {
  jsonBytes,
  MAX_ACTIVITY_PAYLOAD_BYTES,
  MAX_PART_BYTES,
  MAX_TOOL_RESULT_CHARS,
  prefixWithinBytes,
  TEMPORAL_PAYLOAD_LIMIT_BYTES,
  TEMPORAL_PAYLOAD_WARN_BYTES,
  tailWithinBytes,
  truncateText,
  utf8Bytes,
} from '../../src/shared/payload-limits.js';
import type { ChatMessage, ModelCallResult, ToolCall, ToolDefinition } from '../../src/shared/types.js';
import { prepareToolCall } from '../../src/workflows/tool-calls.js';
import { Transcript } from '../../src/workflows/transcript.js';

/** What Temporal's default payload converter sends: JSON in UTF-8. */
const encodedBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/** Text of every kind a JSON encoder treats differently: ASCII, escapes, 2-, 3- and 4-byte characters, lone surrogates. */
const SAMPLES = ['a', '"', '\\', '\n', '\u0001', '\u007f', 'é', '字', '😀', '\ud800', '\udc00', '\u2028'];

function randomText(length: number, seed: number): string {
  let state = seed;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31);
  let text = '';
  while (text.length < length) text += SAMPLES[next() % SAMPLES.length];
  return text;
}

function recordingLog(): PayloadLog & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, warn: (message) => void warnings.push(message) };
}

function tool(name: string, descriptionChars: number): ToolDefinition {
  return {
    name,
    description: 'd'.repeat(descriptionChars),
    inputSchema: { type: 'object', properties: {} },
    annotations: {},
    server: 'test',
    originalName: name,
    timeoutMs: 30_000,
  };
}

function modelResult(content: string | null, toolCalls?: ToolCall[]): ModelCallResult {
  return {
    message: { role: 'assistant', content, ...(toolCalls ? { toolCalls } : {}) },
    usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
    finishReason: toolCalls ? 'tool_calls' : 'stop',
    model: 'scripted-model',
  };
}

describe('DURABLE_AGENT_TOOL_RESULT_MAX_CHARS', () => {
  it('payload limits: a value over the maximum is a ConfigError naming the variable, the value and the range', () => {
    const load = () => loadConfig({ DURABLE_AGENT_TOOL_RESULT_MAX_CHARS: '3000000' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(
      `Invalid DURABLE_AGENT_TOOL_RESULT_MAX_CHARS="3000000": expected a whole number from 100 to ${MAX_TOOL_RESULT_CHARS}`,
    );
    expect(() => loadConfig({ DURABLE_AGENT_TOOL_RESULT_MAX_CHARS: String(MAX_TOOL_RESULT_CHARS + 1) })).toThrow(
      ConfigError,
    );
    expect(() => loadConfig({ DURABLE_AGENT_TOOL_RESULT_MAX_CHARS: '99' })).toThrow(ConfigError);
  });

  it('payload limits: the maximum itself and the default are accepted', () => {
    const max = String(MAX_TOOL_RESULT_CHARS);
    expect(loadConfig({ DURABLE_AGENT_TOOL_RESULT_MAX_CHARS: max }).toolResultMaxChars).toBe(MAX_TOOL_RESULT_CHARS);
    expect(loadConfig({}).toolResultMaxChars).toBe(20_000);
  });

  it('payload limits: the bounds sit under Temporal’s: a part under the warning, an activity payload under the limit', () => {
    expect(MAX_PART_BYTES).toBeLessThan(TEMPORAL_PAYLOAD_WARN_BYTES);
    expect(2 * MAX_PART_BYTES + 64 * 1024).toBeLessThan(MAX_ACTIVITY_PAYLOAD_BYTES);
    expect(MAX_ACTIVITY_PAYLOAD_BYTES).toBeLessThan(TEMPORAL_PAYLOAD_LIMIT_BYTES);
    // Even text of the most bytes per code unit (\u0001 escapes: 6) is under the hard limit at the maximum setting.
    expect(MAX_TOOL_RESULT_CHARS * 6 + 2).toBeLessThan(TEMPORAL_PAYLOAD_LIMIT_BYTES);
  });
});

describe('measuring payloads', () => {
  it('payload limits: jsonBytes is the length of the JSON in UTF-8, whatever the text', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const text = randomText(200, seed);
      expect(jsonBytes(text)).toBe(encodedBytes(text));
      expect(jsonBytes({ role: 'tool', content: text, list: [text, 1, null] })).toBe(
        encodedBytes({ role: 'tool', content: text, list: [text, 1, null] }),
      );
    }
    expect(utf8Bytes('😀')).toBe(4);
    expect('😀'.length).toBe(2);
    expect(jsonBytes(undefined)).toBe(0);
  });

  it('payload limits: prefixWithinBytes gives the longest prefix that fits, never half a surrogate pair', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const text = randomText(300, seed);
      const budget = 50 + seed * 7;
      const length = prefixWithinBytes(text, budget);
      expect(encodedBytes(text.slice(0, length))).toBeLessThanOrEqual(budget);
      // One more unit (two for a pair) would not fit.
      const code = text.charCodeAt(length);
      const pair = code >= 0xd800 && code <= 0xdbff && /[\udc00-\udfff]/.test(text[length + 1] ?? '');
      if (length < text.length) expect(encodedBytes(text.slice(0, length + (pair ? 2 : 1)))).toBeGreaterThan(budget);
      const last = text.charCodeAt(length - 1);
      if (last >= 0xd800 && last <= 0xdbff) expect(text.charCodeAt(length)).not.toBeGreaterThanOrEqual(0xdc00);
    }
  });

  it('payload limits: truncateText cuts by bytes when the characters fit but the bytes do not, marker included', () => {
    const text = '😀'.repeat(200_000);
    const result = truncateText(text, MAX_TOOL_RESULT_CHARS, MAX_PART_BYTES);
    expect(result).toMatchObject({ truncated: true, limitedBy: 'bytes' });
    expect(encodedBytes(result.text)).toBeLessThanOrEqual(MAX_PART_BYTES);
    const [body, marker] = result.text.split('\n…');
    expect(body).toBe('😀'.repeat(body!.length / 2));
    expect(marker).toBe(`[truncated: ${body!.length} of 400000 characters shown]`);

    const ascii = truncateText('x'.repeat(400_000), MAX_TOOL_RESULT_CHARS, MAX_PART_BYTES);
    expect(ascii.limitedBy).toBe('chars');
    expect(ascii.text.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
    expect(truncateText('字'.repeat(10), 100, 32)).toEqual({ text: '字'.repeat(10), truncated: false });
    expect(truncateText('字'.repeat(11), 100, 32).truncated).toBe(true);
  });

  it('payload limits: tailWithinBytes is where the longest tail that fits as a JSON array starts', () => {
    const items = ['a'.repeat(10), 'b'.repeat(10), 'c'.repeat(10)];
    expect(tailWithinBytes(items, encodedBytes(items))).toBe(0);
    expect(tailWithinBytes(items, encodedBytes(items) - 1)).toBe(1);
    expect(tailWithinBytes(items, encodedBytes(items.slice(2)))).toBe(2);
    expect(tailWithinBytes(items, 5)).toBe(3);
    expect(tailWithinBytes([], 0)).toBe(0);
  });
});

describe('the new messages of a model call', () => {
  it('payload limits: messages that would make the input too large join the prefix, for the worker to read by query', () => {
    const user: ChatMessage = { role: 'user', content: 'read both files', id: 'm-1' };
    const big = (id: string): ChatMessage => ({
      role: 'tool',
      toolCallId: id,
      name: 'files__read_file',
      content: '字'.repeat(100_000),
      outcome: 'ok',
    });
    const transcript = new Transcript([user]);
    expect(transcript.nextModelInput()).toEqual({ prefix: transcript.position(0), newMessages: [user] });
    transcript.markShared(1);
    transcript.append(big('a'), big('b'), {
      role: 'tool',
      toolCallId: 'c',
      name: 'x',
      content: 'small',
      outcome: 'ok',
    });

    const { prefix, newMessages } = transcript.nextModelInput();
    expect(prefix).toEqual(transcript.position(2));
    expect(newMessages).toEqual(transcript.messages.slice(2));
    expect(encodedBytes(newMessages)).toBeLessThanOrEqual(MAX_PART_BYTES);
    // Not even one fits: all of them are read by query.
    expect(transcript.nextModelInput(10)).toEqual({ prefix: transcript.position(4), newMessages: [] });
  });
});

describe('the tool activity’s heartbeat', () => {
  it('payload limits: a progress message is cut, so heartbeat details never make a call fail as too large', () => {
    const progress = { progress: 1, total: 2, message: 'p'.repeat(3_000_000) };
    const bounded = boundProgress(progress);
    expect(bounded).toMatchObject({ progress: 1, total: 2 });
    expect(bounded.message?.length).toBeLessThanOrEqual(MAX_PROGRESS_MESSAGE_CHARS);
    expect(bounded.message).toMatch(/\n…\[truncated: \d+ of 3000000 characters shown\]$/);
    const small = { progress: 1, message: 'step 1' };
    expect(boundProgress(small)).toBe(small);
  });
});

describe('the model activity’s result', () => {
  it('payload limits: an answer over the bound is cut with a marker and the worker logs it', () => {
    const log = recordingLog();
    const result = fitModelAnswer(modelResult('x'.repeat(3_000_000)), log);
    expect(result.message.content).toMatch(/\n…\[truncated: \d+ of 3000000 characters shown\]$/);
    expect(jsonBytes(result.message)).toBeLessThanOrEqual(MAX_PART_BYTES + 100);
    expect(log.warnings).toEqual([expect.stringContaining('its text (2.9 MiB) was cut')]);

    const small = modelResult('fine');
    expect(fitModelAnswer(small, log)).toBe(small);
    expect(log.warnings).toHaveLength(1);
  });

  it('payload limits: tool calls keep their order; one whose arguments do not fit keeps its id and name, not its arguments', () => {
    const log = recordingLog();
    const calls: ToolCall[] = [
      { id: 'a', name: 'files__write_file', arguments: JSON.stringify({ text: 'a'.repeat(300_000) }) },
      { id: 'b', name: 'files__write_file', arguments: JSON.stringify({ text: 'b'.repeat(300_000) }) },
      { id: 'c', name: 'memory__search', arguments: '{"query":"x"}' },
    ];
    const result = fitModelAnswer(modelResult('Writing both.', calls), log);
    expect(result.message.toolCalls).toEqual([
      calls[0],
      { id: 'b', name: 'files__write_file', arguments: '{}', oversizedArgumentsBytes: 300_011 },
      calls[2],
    ]);
    expect(result.message.content).toBe('Writing both.');
    expect(jsonBytes(result.message)).toBeLessThanOrEqual(MAX_PART_BYTES);
    expect(log.warnings).toEqual([expect.stringContaining('the arguments of tool call files__write_file (293.0 KiB)')]);
  });

  it('payload limits: the workflow answers a call whose arguments were dropped with their size, without running it', () => {
    const definition = tool('files__write_file', 10);
    const prepared = prepareToolCall(
      { id: 'b', name: 'files__write_file', arguments: '{}', oversizedArgumentsBytes: 3_000_000 },
      new Map([[definition.name, definition]]),
    );
    expect(prepared.kind).toBe('reject');
    expect(prepared).toMatchObject({ message: { outcome: 'invalid_arguments', toolCallId: 'b' } });
    const content = prepared.kind === 'reject' ? prepared.message.content : '';
    expect(content).toContain(
      "(2.9 MiB) did not fit in the 508.0 KiB that one answer's tool calls can carry together, so the call was not run",
    );
    // Dropped because the calls before it took the room: small arguments, still not run (with `{}`).
    const crowdedOut = prepareToolCall(
      { id: 'c', name: 'files__write_file', arguments: '{}', oversizedArgumentsBytes: 20 },
      new Map([[definition.name, definition]]),
    );
    expect(crowdedOut).toMatchObject({ kind: 'reject', message: { outcome: 'invalid_arguments' } });
  });

  it('payload limits: a tool list over the bound loses its largest tools first, and the worker logs which', () => {
    const log = recordingLog();
    const tools = [tool('a__small', 100), tool('b__huge', 600_000), tool('c__medium', 1_000), tool('d__small', 100)];
    const kept = fitToolList(tools, log);
    expect(kept.map((entry) => entry.name)).toEqual(['a__small', 'c__medium', 'd__small']);
    expect(log.warnings).toEqual([expect.stringContaining('Left 1 of 4 tools out of the turn')]);

    const many = Array.from({ length: 2_000 }, (_, index) => tool(`s__tool_${index}`, 400 + (index % 7)));
    const fitted = fitToolList(many, log);
    expect(jsonBytes(fitted)).toBeLessThanOrEqual(MAX_PART_BYTES);
    expect(fitted.length).toBeGreaterThan(500);
    expect(fitToolList(kept, log)).toBe(kept);
  });

  it('payload limits: a worker logs the same tools left out once, not every turn', () => {
    const log = recordingLog();
    const fit = fitToolListOnce();
    const tools = [tool('a__small', 100), tool('b__huge', 600_000)];
    for (let turn = 0; turn < 3; turn++) expect(fit(tools, log).map((entry) => entry.name)).toEqual(['a__small']);
    expect(log.warnings).toHaveLength(1);
    fit([...tools, tool('c__huge', 700_000)], log);
    expect(log.warnings).toHaveLength(2);
  });

  it('payload limits: a result still too large (thousands of tool calls) fails as a non-retryable ModelResponseTooLarge', () => {
    const calls = Array.from({ length: 30_000 }, (_, index) => ({
      id: `call_${index}`,
      name: 'memory__search',
      arguments: '{"query":"x"}',
    }));
    const result = fitModelAnswer(modelResult(null, calls), recordingLog());
    let failure: unknown;
    try {
      checkModelResult(result);
    } catch (error) {
      failure = error;
    }
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FailureType.ModelResponseTooLarge, nonRetryable: true });
    expect((failure as Error).message).toMatch(
      /30000 tool calls\) makes a result of [\d.]+ MiB, more than the 1.5 MiB/,
    );
  });
});
