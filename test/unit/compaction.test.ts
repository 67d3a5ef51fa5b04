import { describe, expect, it } from 'vitest';
import {
  COMPACT_TO,
  modelView,
  planCompaction,
  SUMMARY_HEADING,
  summaryMessage,
  summaryRequestText,
  viewTokens,
} from '../../src/shared/compaction.js';
import { learnedWindow, refusalLimits, tableContextWindow } from '../../src/shared/model-windows.js';
import type { ChatMessage, CompactionRecord } from '../../src/shared/types.js';
import { carriedWithSummary } from '../../src/workflows/carried-transcript.js';
import { ContextWindow } from '../../src/workflows/context-window.js';

const text = (label: string, tokens: number) => `${label} ${'x'.repeat(tokens * 4)}`;
const system: ChatMessage = { role: 'system', content: 'Be brief.' };
const user = (label: string, tokens = 100): ChatMessage => ({ role: 'user', content: text(label, tokens) });
const answer = (label: string, tokens = 100): ChatMessage => ({ role: 'assistant', content: text(label, tokens) });
const toolRound = (label: string): ChatMessage[] => [
  { role: 'assistant', content: null, toolCalls: [{ id: `call-${label}`, name: 'files__read', arguments: '{}' }] },
  { role: 'tool', toolCallId: `call-${label}`, name: 'files__read', content: text(label, 200), outcome: 'ok' },
];
/** A turn: the user's message, a tool round, the answer. */
const turn = (label: string): ChatMessage[] => [user(label), ...toolRound(label), answer(label)];
const record = (verbatim: number): CompactionRecord => ({
  from: 1,
  to: 5,
  verbatim,
  reason: 'window',
  tokensBefore: 900,
});

describe('compaction: the model view', () => {
  it('is the transcript itself while it holds no summary', () => {
    const messages = [system, ...turn('a'), ...turn('b')];
    expect(modelView(messages)).toEqual(messages);
  });

  it('puts the latest summary after the system prompt, in place of what it summarized, and keeps the verbatim turns', () => {
    const messages = [system, ...turn('a'), ...turn('b'), summaryMessage('notes', record(4)), user('c')];
    expect(modelView(messages)).toEqual([
      system,
      { role: 'system', content: `${SUMMARY_HEADING}notes` },
      ...turn('b'),
      user('c'),
    ]);
  });

  it('uses only the latest summary, and leaves earlier ones out', () => {
    const messages = [
      system,
      ...turn('a'),
      summaryMessage('first', record(0)),
      ...turn('b'),
      summaryMessage('second', record(0)),
      user('c'),
    ];
    expect(modelView(messages)).toEqual([system, { role: 'system', content: `${SUMMARY_HEADING}second` }, user('c')]);
  });
});

describe('compaction: the plan', () => {
  const window = 2_000;

  it('cuts at the start of a turn, so a tool call is never parted from its result, and keeps the newest turn', () => {
    const messages = [system, ...turn('a'), ...turn('b'), ...turn('c'), ...turn('d')];
    const plan = planCompaction(messages, { window, toolTokens: 0 })!;

    expect(messages[plan.to]?.role).toBe('user');
    expect(plan.from).toBe(1);
    expect(plan.to).toBeLessThanOrEqual(messages.length - 4);
    expect(plan.verbatim).toBe(messages.length - plan.to);
    expect(plan.previous).toBeUndefined();
  });

  it('cuts as early as brings the input to half the window', () => {
    const messages = [system, ...turn('a'), ...turn('b'), ...turn('c'), ...turn('d'), ...turn('e')];
    const plan = planCompaction(messages, { window: 4_000, toolTokens: 0 })!;
    const after = [...messages.slice(0, 1), summaryMessage('s', record(0)), ...messages.slice(plan.to)];
    // What stays verbatim (with the room kept for the summary) fits; one turn more would not.
    expect(viewTokens(after) + 400).toBeLessThanOrEqual(4_000 * COMPACT_TO);
    expect(viewTokens([...after.slice(0, 2), ...messages.slice(plan.to - 4)]) + 400).toBeGreaterThan(
      4_000 * COMPACT_TO,
    );
  });

  it('has nothing to summarize when only the newest turn is there', () => {
    expect(planCompaction([system, ...turn('a')], { window: 100, toolTokens: 0 })).toBeUndefined();
  });

  it('folds the earlier summary in and summarizes from where it stopped', () => {
    const messages = [
      system,
      ...turn('a'),
      ...turn('b'),
      summaryMessage('notes', record(4)),
      ...turn('c'),
      ...turn('d'),
    ];
    const plan = planCompaction(messages, { window, toolTokens: 0 })!;
    expect(plan.previous).toBe(9);
    expect(plan.from).toBe(5);
    expect(messages[plan.to]?.role).toBe('user');
  });

  it('summarizes less when the part would not fit a summary request (the next summary takes the rest)', () => {
    const messages = [system, ...Array.from({ length: 12 }, (_, index) => turn(`t${index}`)).flat()];
    const plan = planCompaction(messages, { window: 2_000, toolTokens: 0 })!;
    expect(plan.replacedTokens).toBeLessThanOrEqual(2_000 * 0.6);
    expect(plan.to).toBeGreaterThan(1);
  });
});

describe('compaction: what continue-as-new carries', () => {
  it('the summary and what follows, in place, with the offset that keeps whole-conversation indexes', () => {
    const messages = [system, ...turn('a'), ...turn('b'), summaryMessage('notes', record(4)), ...turn('c')];
    const kept = carriedWithSummary(messages);
    expect(kept.messages).toEqual([system, ...messages.slice(5)]);
    // The next run's first message after its system prompt is message 5 of this run.
    expect(kept.dropped).toBe(4);
    expect(modelView(kept.messages)).toEqual(modelView(messages));
  });

  it('the summary after the system prompt when the turns that fit start after it', () => {
    const messages = [system, ...turn('a'), summaryMessage('notes', record(0)), ...turn('b'), ...turn('c')];
    const size = (list: ChatMessage[]) => list.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
    const kept = carriedWithSummary(messages, size([system, summaryMessage('notes', record(0)), ...turn('c')]) + 10);
    expect(kept.messages).toEqual([system, summaryMessage('notes', record(0)), ...turn('c')]);
    expect(kept.dropped).toBe(messages.length - 4 - 1 - 1);
  });
});

describe('compaction: windows', () => {
  it('knows the windows of model families, with or without a provider prefix and a date', () => {
    expect(tableContextWindow('gpt-4o-mini')).toBe(128_000);
    expect(tableContextWindow('openai:gpt-4o-2024-08-06')).toBe(128_000);
    expect(tableContextWindow('anthropic:claude-sonnet-4-5')).toBe(200_000);
    expect(tableContextWindow('gpt-4.1-mini')).toBe(1_047_576);
    expect(tableContextWindow('scripted-model')).toBeUndefined();
  });

  it("reads OpenAI's and Anthropic's refusals, and the Responses API's that names no numbers", () => {
    expect(
      refusalLimits(
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
      ),
    ).toEqual({ limit: 8_192, requested: 9_001 });
    expect(refusalLimits('prompt is too long: 210,000 tokens > 200,000 maximum')).toEqual({
      limit: 200_000,
      requested: 210_000,
    });
    expect(refusalLimits('Your input exceeds the context window of this model.')).toEqual({});
  });

  it('learns a window in estimated tokens: scaled by the refusal, or under the estimate it refused', () => {
    expect(learnedWindow({ limit: 6_000, requested: 6_200 }, 5_000)).toBe(4_838);
    expect(learnedWindow({}, 5_000)).toBe(4_500);
  });

  it('takes the lower of the settings (or table) and what a refusal showed; a first refusal before any model named', () => {
    const window = new ContextWindow({ contextWindow: 10_000 }, undefined);
    expect(window.windowOf('gpt-4o')).toBe(10_000);
    window.learn('gpt-4o', 8_000);
    expect(window.windowOf('gpt-4o')).toBe(8_000);
    const unnamed = new ContextWindow({}, undefined);
    unnamed.learn(undefined, 3_000);
    unnamed.model = 'scripted-model';
    expect(unnamed.windowOf(undefined)).toBe(3_000);
    expect(new ContextWindow({ compaction: false }, undefined).enabled).toBe(false);
  });
});

describe('compaction: the summary request', () => {
  it('writes each message on a line, and cuts long ones to an equal share when the whole would not fit', () => {
    const request = summaryRequestText('- earlier', [user('a', 10), ...toolRound('b'), answer('c', 1_000)], 2_000);
    expect(request.startsWith('Earlier summary:\n- earlier\n\nConversation to summarize:\n[user] a ')).toBe(true);
    expect(request).toContain('[assistant] calls files__read({})');
    expect(request).toContain('[tool files__read] b ');
    expect(request.length).toBeLessThanOrEqual(2_000 + 4 * 10);
    expect(request).toContain(' [...]');
  });
});

describe('compaction: history', () => {
  it('`history` prints a summary with what it stands for', async () => {
    const { formatMessage } = await import('../../src/cli/format.js');
    const summary = summaryMessage('- The code word is amber.', {
      from: 1,
      to: 9,
      verbatim: 4,
      reason: 'refusal',
      tokensBefore: 6_100,
    });
    expect(formatMessage(summary, 13)).toBe(
      '[13] summary of messages up to [8], newly [1]-[8] (refusal, ~6100 tokens before): - The code word is amber.',
    );
  });
});

describe('compaction: settings', () => {
  it('is on by default, off with compaction: false, and off when maxInputTokens chose trimming unless asked for', () => {
    expect(new ContextWindow({}, undefined).enabled).toBe(true);
    expect(new ContextWindow({ compaction: false }, undefined).enabled).toBe(false);
    expect(new ContextWindow({ maxInputTokens: 4_000 }, undefined).enabled).toBe(false);
    expect(new ContextWindow({ maxInputTokens: 4_000, compaction: true }, undefined).enabled).toBe(true);
  });
});
