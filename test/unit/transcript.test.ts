import { describe, expect, it } from 'vitest';
import { EMPTY_DIGEST, prefixDigests } from '../../src/shared/digest.js';
import type { ChatMessage } from '../../src/shared/types.js';
import { Transcript } from '../../src/workflows/transcript.js';

const system: ChatMessage = { role: 'system', content: 'Be brief.' };
const question: ChatMessage = { role: 'user', content: 'What is 2 + 2?', id: 'm-1' };
const toolCall: ChatMessage = {
  role: 'assistant',
  content: null,
  toolCalls: [{ id: 'call-1', name: 'calc__add', arguments: '{"a":2,"b":2}' }],
};
const toolResult: ChatMessage = { role: 'tool', toolCallId: 'call-1', name: 'calc__add', content: '4', outcome: 'ok' };
const answer: ChatMessage = { role: 'assistant', content: '4.' };

describe('Transcript', () => {
  it('transcript: position(n) names the first n messages by their chained digest', () => {
    const messages = [system, question, toolCall, toolResult, answer];
    const transcript = new Transcript(messages);
    const digests = prefixDigests(messages);

    expect(transcript.length).toBe(5);
    expect(transcript.messages).toEqual(messages);
    for (let count = 0; count <= messages.length; count++) {
      expect(transcript.position(count)).toEqual({ count, digest: digests[count] });
    }
    expect(transcript.position(0)).toEqual({ count: 0, digest: EMPTY_DIGEST });
  });

  it('transcript: appending one at a time gives the same positions as starting with the messages', () => {
    const appended = new Transcript([system]);
    appended.append(question);
    appended.append(toolCall, toolResult);

    const whole = new Transcript([system, question, toolCall, toolResult]);
    expect(appended.position(4)).toEqual(whole.position(4));
    expect(appended.position(2)).toEqual(whole.position(2));
  });

  it('transcript: a position past the end is a RangeError that says how long the transcript is', () => {
    const transcript = new Transcript([system, question]);

    expect(() => transcript.position(3)).toThrow(RangeError);
    expect(() => transcript.position(3)).toThrow('Transcript has 2 messages, not 3');
  });

  it('transcript: before any model call the whole transcript is new and the prefix is empty', () => {
    const transcript = new Transcript([system, question]);

    expect(transcript.nextModelInput()).toEqual({
      prefix: { count: 0, digest: EMPTY_DIGEST },
      newMessages: [system, question],
    });
  });

  it('transcript: after markShared the next model input names the shared prefix and sends only what came after', () => {
    const transcript = new Transcript([system, question]);
    // The model answered with a tool call: the worker holds the input and its answer.
    transcript.append(toolCall);
    transcript.markShared(3);
    transcript.append(toolResult);

    const input = transcript.nextModelInput();

    expect(input.prefix).toEqual(transcript.position(3));
    expect(input.prefix.digest).toBe(prefixDigests([system, question, toolCall])[3]);
    expect(input.newMessages).toEqual([toolResult]);
  });

  it('transcript: a prefix names the same messages however the transcript grows afterwards', () => {
    const transcript = new Transcript([system, question]);
    const before = transcript.position(2);
    transcript.append(toolCall, toolResult, answer);

    expect(transcript.position(2)).toEqual(before);
  });

  it('transcript: newMessages is a copy, so changing it does not change the transcript', () => {
    const transcript = new Transcript([system, question]);
    transcript.nextModelInput().newMessages.push(answer);

    expect(transcript.length).toBe(2);
  });
});
