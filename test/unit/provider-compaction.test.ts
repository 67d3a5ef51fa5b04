import { describe, expect, it } from 'vitest';
import { formatMessage } from '../../src/cli/format.js';
import {
  compactionSettingProblem,
  fromLatestProviderCompaction,
  providerCompactionProblem,
} from '../../src/shared/provider-compaction.js';
import type { ChatMessage } from '../../src/shared/types.js';
import { contextManagement } from '../../src/worker/activities/model/providers/anthropic-context.js';
import { carriedForNextRun, carriedWithSummary } from '../../src/workflows/carried-transcript.js';

/** The pure rules of provider-native compaction (docs/models.md#provider-native-compaction). */

const compacted = (id: string): ChatMessage => ({
  role: 'assistant',
  content: `answer ${id}`,
  providerCompaction: { type: 'openai_compaction', id, encryptedContent: `enc-${id}` },
});

describe('provider compaction: the setting', () => {
  it('takes true, false, "provider" and nothing; anything else is named with the values allowed', () => {
    for (const value of [undefined, true, false, 'provider']) expect(compactionSettingProblem(value)).toBeUndefined();
    expect(compactionSettingProblem('summaries')).toMatch(
      /^settings\.compaction is string "summaries": expected true .* false .* or "provider"/,
    );
    expect(compactionSettingProblem({ mode: 'provider' })).toContain('settings.compaction is an object');
  });

  it('"provider" suits openai-responses: and anthropic: models; any other name goes to Chat Completions and is refused', () => {
    expect(providerCompactionProblem('openai-responses:gpt-5.1')).toBeUndefined();
    expect(providerCompactionProblem('anthropic:claude-sonnet-4-5')).toBeUndefined();
    for (const model of ['gpt-4o', 'openai:gpt-5.1', 'llama3:8b', 'anthropic:']) {
      expect(providerCompactionProblem(model)).toContain(`the model "${model}" is served by Chat Completions`);
    }
  });
});

describe('provider compaction: what is sent', () => {
  it('from the latest item of the provider on, the system messages kept; another provider’s items do not cut', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'prompt' },
      { role: 'user', content: 'one' },
      compacted('a'),
      { role: 'user', content: 'two' },
      compacted('b'),
      { role: 'user', content: 'three' },
    ];
    expect(fromLatestProviderCompaction(messages, 'openai_compaction')).toEqual([
      messages[0],
      messages[4],
      messages[5],
    ]);
    expect(fromLatestProviderCompaction(messages, 'anthropic_compaction')).toBe(messages);
  });

  it('Anthropic: tool results cleared at half the window, compaction at the threshold, never under 50,000', () => {
    expect(contextManagement({ threshold: 160_000 }).edits).toEqual([
      { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 100_000 } },
      { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 160_000 } },
    ]);
    expect(contextManagement({ threshold: 4_800 }).edits?.[1]).toMatchObject({ trigger: { value: 50_000 } });
    // No known window: the API's own triggers.
    expect(contextManagement({}).edits).toEqual([{ type: 'clear_tool_uses_20250919' }, { type: 'compact_20260112' }]);
  });

  it('history shows a compaction: the summary when the provider gives one, the item id when it is encrypted', () => {
    expect(formatMessage(compacted('cmp_1'), 4)).toBe(
      '[4] provider compaction of everything before (encrypted by the provider, cmp_1)\n[4] assistant: answer cmp_1',
    );
    const anthropic: ChatMessage = {
      role: 'assistant',
      content: 'ok',
      providerCompaction: { type: 'anthropic_compaction', content: '- The sky is green.' },
    };
    expect(formatMessage(anthropic, 7)).toBe(
      '[7] provider compaction of everything before: - The sky is green.\n[7] assistant: ok',
    );
  });
});

describe('provider compaction: what the next run carries', () => {
  const turn = (n: number, size = 100): ChatMessage[] => [
    { role: 'user', content: `question ${n} ${'x'.repeat(size)}` },
    { role: 'assistant', content: `answer ${n}` },
  ];
  const prompt: ChatMessage = { role: 'system', content: 'prompt' };

  it('starts at the message holding the latest item when the turns that fit start after it', () => {
    const holder = compacted('cmp_1');
    const messages = [prompt, ...turn(1), ...turn(2), holder, ...turn(3, 400), ...turn(4, 400)];
    const size = (list: ChatMessage[]) => list.reduce((sum, message) => sum + JSON.stringify(message).length, 0);
    // Room for the last turn only: without the item, the next run would lose what it stands for.
    const maxChars = size([prompt, ...turn(4, 400)]) + 10;
    expect(carriedWithSummary(messages, maxChars).messages).not.toContain(holder);
    // With it, as long as everything from the item on fits.
    const roomy = size([prompt, holder, ...turn(3, 400), ...turn(4, 400)]);
    expect(carriedForNextRun(messages, roomy)).toEqual({ messages: [prompt, ...messages.slice(5)], dropped: 4 });
    expect(carriedForNextRun(messages, maxChars)).toEqual(carriedWithSummary(messages, maxChars));
  });

  it('carries as before when the item is among the turns that fit, or when there is none', () => {
    const messages = [prompt, ...turn(1), compacted('cmp_2'), ...turn(2)];
    expect(carriedForNextRun(messages)).toEqual(carriedWithSummary(messages));
    const plain = [prompt, ...turn(1), ...turn(2)];
    expect(carriedForNextRun(plain, 200)).toEqual(carriedWithSummary(plain, 200));
  });
});
