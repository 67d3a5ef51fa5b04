import { describe, expect, it } from 'vitest';
import { CHARS_PER_TOKEN, estimateTokens, TOKENS_PER_MESSAGE, trimToContext } from '../../src/shared/context.js';
import type { ChatMessage } from '../../src/shared/types.js';

describe('estimateTokens', () => {
  it('context: a message costs TOKENS_PER_MESSAGE plus its characters over CHARS_PER_TOKEN, rounded up', () => {
    expect(CHARS_PER_TOKEN).toBe(4);
    expect(TOKENS_PER_MESSAGE).toBe(4);
    expect(estimateTokens({ role: 'user', content: '' })).toBe(4);
    expect(estimateTokens({ role: 'user', content: 'abcd' })).toBe(5);
    expect(estimateTokens({ role: 'system', content: 'abcde' })).toBe(6);
  });

  it('context: an assistant message counts its text and each tool call id, name and arguments', () => {
    const message: ChatMessage = {
      role: 'assistant',
      content: 'abcd',
      toolCalls: [
        { id: 'c1', name: 'ab', arguments: '{}' },
        { id: 'c2', name: 'cd', arguments: '{"a":1}' },
      ],
    };
    // 4 + (2 + 2 + 2) + (2 + 2 + 7) = 21 characters.
    expect(estimateTokens(message)).toBe(4 + Math.ceil(21 / 4));
    expect(estimateTokens({ role: 'assistant', content: null })).toBe(4);
  });

  it('context: a tool message counts its content and its tool call id, not its name', () => {
    const message: ChatMessage = {
      role: 'tool',
      toolCallId: 'call',
      name: 'a-long-tool-name',
      content: 'abcd',
      outcome: 'ok',
    };
    expect(estimateTokens(message)).toBe(4 + 2);
  });
});

const system: ChatMessage = { role: 'system', content: 'You are terse.' };

/** A turn with a tool call and its result; `size` pads the tool result so turns can differ in weight. */
function turn(index: number, size = 40): ChatMessage[] {
  return [
    { role: 'user', content: `question ${index}` },
    { role: 'assistant', content: null, toolCalls: [{ id: `call-${index}`, name: 'files__read', arguments: '{}' }] },
    { role: 'tool', toolCallId: `call-${index}`, name: 'files__read', content: 'r'.repeat(size), outcome: 'ok' },
    { role: 'assistant', content: `answer ${index}` },
  ];
}

const tokensOf = (messages: readonly ChatMessage[]) =>
  messages.reduce((sum, message) => sum + estimateTokens(message), 0);

function expectToolCallsPaired(messages: readonly ChatMessage[]): void {
  const asked = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) asked.add(call.id);
    if (message.role === 'tool') expect(asked.has(message.toolCallId)).toBe(true);
  }
}

describe('trimToContext', () => {
  it('context: without maxInputTokens nothing is dropped and the estimate is reported', () => {
    const messages = [system, ...turn(1), ...turn(2)];
    expect(trimToContext(messages, undefined)).toEqual({ messages, dropped: 0, estimatedTokens: tokensOf(messages) });
  });

  it('context: a transcript that fits, exactly at the limit, is sent whole', () => {
    const messages = [system, ...turn(1), ...turn(2)];
    expect(trimToContext(messages, tokensOf(messages))).toEqual({
      messages,
      dropped: 0,
      estimatedTokens: tokensOf(messages),
    });
  });

  it('context: drops the oldest whole turns first, only as many as needed', () => {
    const turns = [turn(1), turn(2), turn(3), turn(4)];
    const messages = [system, ...turns.flat()];
    const kept = [system, ...turns[2]!, ...turns[3]!];

    const trimmed = trimToContext(messages, tokensOf(kept));

    expect(trimmed).toEqual({ messages: kept, dropped: 8, estimatedTokens: tokensOf(kept) });
  });

  it('context: one token short of two turns keeps only the current turn', () => {
    const turns = [turn(1), turn(2), turn(3)];
    const messages = [system, ...turns.flat()];
    const kept = [system, ...turns[2]!];

    const trimmed = trimToContext(messages, tokensOf([system, ...turns[1]!, ...turns[2]!]) - 1);

    expect(trimmed).toEqual({ messages: kept, dropped: 8, estimatedTokens: tokensOf(kept) });
  });

  it('context: keeps the leading system messages and the current turn even when they alone exceed the limit', () => {
    const second: ChatMessage = { role: 'system', content: 'Cite your sources.' };
    const current = turn(3, 4_000);
    const messages = [system, second, ...turn(1), ...turn(2), ...current];

    const trimmed = trimToContext(messages, 10);

    expect(trimmed.messages).toEqual([system, second, ...current]);
    expect(trimmed.dropped).toBe(8);
    expect(trimmed.estimatedTokens).toBe(tokensOf([system, second, ...current]));
    expect(trimmed.estimatedTokens).toBeGreaterThan(10);
  });

  it('context: never separates a tool call from its result, whatever the limit', () => {
    const messages = [system, ...turn(1, 10), ...turn(2, 300), ...turn(3, 20), ...turn(4, 90), ...turn(5, 5)];
    for (let limit = 0; limit <= tokensOf(messages); limit += 7) {
      const trimmed = trimToContext(messages, limit);
      expectToolCallsPaired(trimmed.messages);
      expect(trimmed.messages[0]).toEqual(system);
      expect(trimmed.messages[1]?.role).toBe('user');
      expect(trimmed.messages.slice(-4)).toEqual(turn(5, 5));
      expect(trimmed.messages.length + trimmed.dropped).toBe(messages.length);
      expect(trimmed.estimatedTokens).toBe(tokensOf(trimmed.messages));
      if (trimmed.dropped > 0 && trimmed.messages.length > 5)
        expect(trimmed.estimatedTokens).toBeLessThanOrEqual(limit);
    }
  });

  it('context: messages before the first user message are dropped with the first turn', () => {
    const greeting: ChatMessage = { role: 'assistant', content: 'Hello! How can I help?' };
    const messages = [system, greeting, ...turn(1), ...turn(2)];

    const trimmed = trimToContext(messages, tokensOf([system, ...turn(2)]));

    expect(trimmed.messages).toEqual([system, ...turn(2)]);
    expect(trimmed.dropped).toBe(5);
  });

  it('context: a compaction item after the system messages is kept, with its tool results, whatever the limit', () => {
    // Cut at a provider's latest item, as the model activity sends it: the item came with a tool call.
    const item: ChatMessage = {
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'call-c', name: 'files__read', arguments: '{}' }],
      providerCompaction: { type: 'openai_compaction', id: 'cmp_1', encryptedContent: 'e'.repeat(400) },
    };
    const result: ChatMessage = {
      role: 'tool',
      toolCallId: 'call-c',
      name: 'files__read',
      content: 'ok',
      outcome: 'ok',
    };
    const messages = [system, item, result, { role: 'assistant', content: 'done' } as const, ...turn(1), ...turn(2)];
    for (let limit = 0; limit <= tokensOf(messages); limit += 5) {
      const trimmed = trimToContext(messages, limit);
      expect(trimmed.messages.slice(0, 4)).toEqual(messages.slice(0, 4));
      expect(trimmed.messages.slice(-4)).toEqual(turn(2));
      expectToolCallsPaired(trimmed.messages);
    }
    // Over the limit, the turns after the item go first, oldest first.
    const trimmed = trimToContext(messages, tokensOf(messages) - 1);
    expect(trimmed.messages).toEqual([...messages.slice(0, 4), ...turn(2)]);
    expect(trimmed.dropped).toBe(4);
  });

  it('context: with a single turn, messages before its user message are dropped when over the limit', () => {
    const greeting: ChatMessage = { role: 'assistant', content: 'Hello! How can I help?' };
    const messages = [system, greeting, ...turn(1)];

    const trimmed = trimToContext(messages, tokensOf([system, ...turn(1)]));

    expect(trimmed).toEqual({
      messages: [system, ...turn(1)],
      dropped: 1,
      estimatedTokens: tokensOf([system, ...turn(1)]),
    });
  });

  it('context: the input array is never changed', () => {
    const messages = [system, ...turn(1), ...turn(2)];
    const copy = structuredClone(messages);
    trimToContext(messages, 1);
    expect(messages).toEqual(copy);
  });
});
