import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import type { ChatMessage } from '../../src/shared/types.js';
import {
  carriedTranscript,
  DEFAULT_MAX_MESSAGE_CHARS,
  MAX_MESSAGE_ID_CHARS,
  MAX_REMEMBERED_IDS,
  RecentIds,
  validateMessage,
} from '../../src/workflows/conversation-state.js';

describe('RecentIds', () => {
  it('conversation state: remembers the ids it was given, in insertion order', () => {
    const ids = new RecentIds(['a', 'b']);
    ids.add('c');

    expect(ids.has('a')).toBe(true);
    expect(ids.has('c')).toBe(true);
    expect(ids.has('d')).toBe(false);
    expect(ids.toArray()).toEqual(['a', 'b', 'c']);
  });

  it('conversation state: forgets the oldest ids first beyond its capacity', () => {
    const ids = new RecentIds([], 3);
    for (const id of ['a', 'b', 'c', 'd', 'e']) ids.add(id);

    expect(ids.toArray()).toEqual(['c', 'd', 'e']);
    expect(ids.has('a')).toBe(false);
    expect(ids.has('b')).toBe(false);
  });

  it('conversation state: adding a known id again makes it the most recent, so it is forgotten last', () => {
    const ids = new RecentIds(['a', 'b', 'c'], 3);
    ids.add('a');
    ids.add('d');

    expect(ids.toArray()).toEqual(['c', 'a', 'd']);
  });

  it('conversation state: initial ids beyond the capacity keep only the most recent (carried across continue-as-new)', () => {
    const ids = new RecentIds(['1', '2', '3', '4'], 2);
    expect(ids.toArray()).toEqual(['3', '4']);
  });

  it('conversation state: the default capacity is MAX_REMEMBERED_IDS', () => {
    const initial = Array.from({ length: MAX_REMEMBERED_IDS + 5 }, (_, index) => `id-${index}`);
    const ids = new RecentIds(initial);

    expect(ids.toArray()).toHaveLength(MAX_REMEMBERED_IDS);
    expect(ids.toArray()[0]).toBe('id-5');
    expect(ids.has('id-4')).toBe(false);
  });
});

function rejection(message: unknown, settings = {}): ApplicationFailure {
  try {
    validateMessage(message, settings);
  } catch (error) {
    if (error instanceof ApplicationFailure) return error;
    throw error;
  }
  throw new Error('validateMessage accepted the message');
}

describe('validateMessage', () => {
  it('conversation state: a message with an id and content is accepted', () => {
    expect(() => validateMessage({ id: 'm-1', content: 'Hello' }, {})).not.toThrow();
  });

  it.each([
    ['null', null],
    ['a string', 'Hello'],
    ['a number', 42],
  ])('conversation state: %s is rejected as InvalidMessage, non-retryable, asking for { id, content }', (_, value) => {
    const failure = rejection(value);
    expect(failure.type).toBe(FailureType.InvalidMessage);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe('A message must be an object { id, content }.');
  });

  it.each([
    ['missing', { content: 'Hi' }],
    ['not a string', { id: 7, content: 'Hi' }],
    ['blank', { id: '  ', content: 'Hi' }],
    ['too long', { id: 'x'.repeat(MAX_MESSAGE_ID_CHARS + 1), content: 'Hi' }],
  ])('conversation state: an id that is %s is rejected and the message says what an id must be', (_, value) => {
    const failure = rejection(value);
    expect(failure.type).toBe(FailureType.InvalidMessage);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe(
      `A message needs an "id": a non-empty string of at most ${MAX_MESSAGE_ID_CHARS} characters.`,
    );
  });

  it('conversation state: an id of exactly MAX_MESSAGE_ID_CHARS characters is accepted', () => {
    expect(() => validateMessage({ id: 'x'.repeat(MAX_MESSAGE_ID_CHARS), content: 'Hi' }, {})).not.toThrow();
  });

  it.each([
    ['missing', { id: 'm-1' }],
    ['not a string', { id: 'm-1', content: ['Hi'] }],
    ['blank', { id: 'm-1', content: ' \n ' }],
  ])('conversation state: content that is %s is rejected as InvalidMessage', (_, value) => {
    const failure = rejection(value);
    expect(failure.type).toBe(FailureType.InvalidMessage);
    expect(failure.message).toBe('A message needs "content": a non-empty string.');
  });

  it('conversation state: content over settings.maxMessageChars is rejected with its length, the limit and the setting', () => {
    const failure = rejection({ id: 'm-1', content: 'x'.repeat(11) }, { maxMessageChars: 10 });
    expect(failure.type).toBe(FailureType.InvalidMessage);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe('The message has 11 characters; the limit is 10 (settings.maxMessageChars).');
    expect(() => validateMessage({ id: 'm-1', content: 'x'.repeat(10) }, { maxMessageChars: 10 })).not.toThrow();
  });

  it('conversation state: without maxMessageChars the limit is DEFAULT_MAX_MESSAGE_CHARS', () => {
    expect(() => validateMessage({ id: 'm', content: 'x'.repeat(DEFAULT_MAX_MESSAGE_CHARS) }, {})).not.toThrow();
    expect(rejection({ id: 'm', content: 'x'.repeat(DEFAULT_MAX_MESSAGE_CHARS + 1) }).message).toContain(
      `the limit is ${DEFAULT_MAX_MESSAGE_CHARS}`,
    );
  });
});

const system: ChatMessage = { role: 'system', content: 'You are a helpful agent.' };

/** A turn of four messages: the user asks, the model calls a tool, the tool answers, the model answers. */
function turn(index: number, size = 20): ChatMessage[] {
  return [
    { role: 'user', content: `question ${index} ${'q'.repeat(size)}` },
    { role: 'assistant', content: null, toolCalls: [{ id: `call-${index}`, name: 'files__read', arguments: '{}' }] },
    { role: 'tool', toolCallId: `call-${index}`, name: 'files__read', content: 'r'.repeat(size), outcome: 'ok' },
    { role: 'assistant', content: `answer ${index}` },
  ];
}

const charsOf = (messages: readonly ChatMessage[]) =>
  messages.reduce((sum, message) => sum + JSON.stringify(message).length, 0);

/** Every tool message must follow an assistant message that asked for its call id. */
function expectToolCallsPaired(messages: readonly ChatMessage[]): void {
  const asked = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) asked.add(call.id);
    if (message.role === 'tool') expect(asked.has(message.toolCallId)).toBe(true);
  }
}

describe('carriedTranscript', () => {
  it('conversation state: a transcript under the limit is carried whole', () => {
    const messages = [system, ...turn(1), ...turn(2)];
    expect(carriedTranscript(messages)).toEqual({ messages, dropped: 0 });
  });

  it('conversation state: keeps the system prompt and the most recent whole turns that fit the char limit', () => {
    const turns = [turn(1), turn(2), turn(3), turn(4)];
    const messages = [system, ...turns.flat()];
    // Room for the system prompt and exactly two turns.
    const limit = charsOf([system, ...turns[2]!, ...turns[3]!]);

    const carried = carriedTranscript(messages, limit);

    expect(carried.messages).toEqual([system, ...turns[2]!, ...turns[3]!]);
    expect(carried.dropped).toBe(8);
    expect(charsOf(carried.messages)).toBeLessThanOrEqual(limit);
  });

  it('conversation state: one character short of a turn drops that whole turn, never part of it', () => {
    const turns = [turn(1), turn(2), turn(3)];
    const messages = [system, ...turns.flat()];
    const limit = charsOf([system, ...turns[1]!, ...turns[2]!]) - 1;

    const carried = carriedTranscript(messages, limit);

    expect(carried.messages).toEqual([system, ...turns[2]!]);
    expect(carried.dropped).toBe(8);
    expectToolCallsPaired(carried.messages);
  });

  it('conversation state: never separates a tool call from its result, whatever the limit', () => {
    const messages = [system, ...turn(1, 5), ...turn(2, 50), ...turn(3, 10), ...turn(4, 200)];
    for (let limit = 0; limit <= charsOf(messages); limit += 37) {
      const carried = carriedTranscript(messages, limit);
      expectToolCallsPaired(carried.messages);
      const kept = carried.messages.filter((message) => message.role !== 'system');
      if (kept.length > 0) expect(kept[0]?.role).toBe('user');
      expect(carried.messages.length + carried.dropped).toBe(messages.length);
    }
  });

  it('conversation state: the leading system messages are always carried, even when nothing else fits', () => {
    const second: ChatMessage = { role: 'system', content: 'Answer in French.' };
    const messages = [system, second, ...turn(1)];

    expect(carriedTranscript(messages, 1)).toEqual({ messages: [system, second], dropped: 4 });
  });

  it('conversation state: messages before the first user message are not carried once turns are dropped', () => {
    const stray: ChatMessage = { role: 'assistant', content: 'Welcome!' };
    const messages = [system, stray, ...turn(1), ...turn(2)];
    const limit = charsOf([system, ...turn(1), ...turn(2)]);

    expect(carriedTranscript(messages, limit)).toEqual({ messages: [system, ...turn(1), ...turn(2)], dropped: 1 });
  });
});
