import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import { type InputPoll, InputRequests, type Wait } from '../../src/workflows/input-requests.js';
import { EventLog } from '../../src/workflows/stream-events.js';

/**
 * The conversation's side of MCP elicitation without Temporal: questions registered by the activity's polls, answers,
 * and what answers them when no person does. `wait` stands in for Temporal's `condition`.
 */

function poll(callId: string, attempt: number, n = 1, timeoutMs = 60_000): InputPoll {
  return {
    request: {
      requestId: `${callId}:${attempt}:${n}`,
      callId,
      tool: 'test__ask_user',
      server: 'test',
      message: 'Who are you?',
      mode: 'form',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
    attempt,
    timeoutMs,
    waitMs: 30_000,
  };
}

/** Returns at once without an answer, as a poll whose wait ran out. */
const noWait: Wait = () => Promise.resolve();

function setUp() {
  const events = new EventLog();
  let changes = 0;
  const inputs = new InputRequests(events, () => changes++);
  return { events, inputs, changes: () => changes };
}

function failureType(action: () => void): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof ApplicationFailure ? (error.type ?? undefined) : 'not an ApplicationFailure';
  }
  return undefined;
}

describe('InputRequests', () => {
  it('the first poll registers the question once; an answer reaches the next poll', async () => {
    const { events, inputs, changes } = setUp();
    expect(await inputs.poll(poll('c1', 1), 1, noWait)).toEqual({});
    expect(await inputs.poll(poll('c1', 1), 1, noWait)).toEqual({});
    expect(inputs.list()).toHaveLength(1);
    expect(inputs.list()[0]).toMatchObject({ requestId: 'c1:1:1', turn: 1, callId: 'c1' });
    expect(inputs.list()[0]).not.toHaveProperty('attempt');

    inputs.validateAnswer({ requestId: 'c1:1:1', action: 'accept', content: { name: 'Ada' } });
    inputs.answer({ requestId: 'c1:1:1', action: 'accept', content: { name: 'Ada' }, by: 'ada' });
    expect(inputs.waiting).toBe(false);
    expect(await inputs.poll(poll('c1', 1), 1, noWait)).toEqual({
      answer: { requestId: 'c1:1:1', action: 'accept', content: { name: 'Ada' }, by: 'ada' },
    });
    expect(events.read(0).events.map((event) => event.type)).toEqual(['input_requested', 'input_answered']);
    expect(changes()).toBe(2);
  });

  it('refuses unknown, answered, and misfitting answers, and nothing changes', async () => {
    const { inputs } = setUp();
    await inputs.poll(poll('c1', 1), 1, noWait);
    expect(failureType(() => inputs.validateAnswer({ requestId: 'nope', action: 'cancel' }))).toBe(
      FailureType.UnknownInputRequest,
    );
    expect(failureType(() => inputs.validateAnswer({ requestId: 'c1:1:1', action: 'accept' }))).toBe(
      FailureType.InvalidInput,
    );
    expect(
      failureType(() => inputs.validateAnswer({ requestId: 'c1:1:1', action: 'decline', content: { name: 'x' } })),
    ).toBe(FailureType.InvalidInput);
    expect(failureType(() => inputs.validateAnswer({ requestId: 'c1:1:1', action: 'maybe' as 'accept' }))).toBe(
      FailureType.InvalidInput,
    );
    expect(inputs.list()).toHaveLength(1);
    inputs.answer({ requestId: 'c1:1:1', action: 'decline' });
    expect(failureType(() => inputs.validateAnswer({ requestId: 'c1:1:1', action: 'cancel' }))).toBe(
      FailureType.AlreadyAnswered,
    );
  });

  it('the wait bound answers cancel by timeout', async () => {
    const { events, inputs } = setUp();
    expect(await inputs.poll(poll('c1', 1, 1, 0), 1, noWait)).toEqual({
      answer: { requestId: 'c1:1:1', action: 'cancel', by: 'timeout' },
    });
    expect(events.read(0).events.at(-1)).toMatchObject({ type: 'input_answered', action: 'cancel', by: 'timeout' });
  });

  it("a retried call's question replaces the earlier attempt's; a finished call's open question is cancelled", async () => {
    const { events, inputs } = setUp();
    await inputs.poll(poll('c1', 1), 1, noWait);
    await inputs.poll(poll('c1', 2), 1, noWait);
    expect(inputs.list().map((request) => request.requestId)).toEqual(['c1:2:1']);
    inputs.callFinished('c1');
    expect(inputs.waiting).toBe(false);
    const answered = events.read(0).events.filter((event) => event.type === 'input_answered');
    expect(answered).toMatchObject([
      { requestId: 'c1:1:1', action: 'cancel', by: 'retried' },
      { requestId: 'c1:2:1', action: 'cancel', by: 'tool-call-ended' },
    ]);
    // A late poll of a settled question gets its answer and registers nothing.
    expect(await inputs.poll(poll('c1', 1), 1, noWait)).toEqual({
      answer: { requestId: 'c1:1:1', action: 'cancel', by: 'retried' },
    });
    expect(inputs.waiting).toBe(false);
  });

  it('an interrupt cancels every pending question; a poll with no running turn is answered cancel', async () => {
    const { inputs } = setUp();
    await inputs.poll(poll('c1', 1), 1, noWait);
    await inputs.poll(poll('c2', 1), 1, noWait);
    inputs.cancelAll('interrupt');
    expect(inputs.waiting).toBe(false);
    expect(await inputs.poll(poll('c2', 1), 1, noWait)).toEqual({
      answer: { requestId: 'c2:1:1', action: 'cancel', by: 'interrupt' },
    });
    expect(await inputs.poll(poll('c3', 1), undefined, noWait)).toEqual({
      answer: { requestId: 'c3:1:1', action: 'cancel', by: 'turn-ended' },
    });
    expect(inputs.waiting).toBe(false);
  });

  it("an accepted form gets the requested fields' defaults for what it leaves out, whichever surface answered", async () => {
    const { inputs } = setUp();
    const question = poll('c4', 1);
    question.request.requestedSchema = {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'Ada' },
        age: { type: 'integer', default: 36 },
        note: { type: 'string' },
      },
      required: ['name'],
    };
    await inputs.poll(question, 1, noWait);

    // `chat` and the client send an empty form as {} (or no content); the chat page sends the defaults it showed.
    expect(failureType(() => inputs.validateAnswer({ requestId: 'c4:1:1', action: 'accept' }))).toBeUndefined();
    expect(inputs.answer({ requestId: 'c4:1:1', action: 'accept' })).toEqual({
      requestId: 'c4:1:1',
      action: 'accept',
      content: { name: 'Ada', age: 36 },
    });
    expect(await inputs.poll(question, 1, noWait)).toEqual({
      answer: { requestId: 'c4:1:1', action: 'accept', content: { name: 'Ada', age: 36 } },
    });
  });
});

describe('InputRequests: questions the turn asks (a 2026-07-28 server)', () => {
  const question = (requestId: string) => ({ ...poll('call_9', 0).request, requestId, callId: 'call_9' });

  it('registers once with no expiry, defaults applied to the answer, and asking again changes nothing', () => {
    const { events, inputs } = setUp();
    inputs.ask(question('call_9:1.1:name'), 1);
    inputs.ask(question('call_9:1.1:name'), 1);
    expect(inputs.list()).toEqual([
      expect.objectContaining({ requestId: 'call_9:1.1:name', turn: 1, requestedAt: expect.any(String) }),
    ]);
    expect(inputs.list()[0]).not.toHaveProperty('expiresAt');
    expect(events.read(0).events.filter((event) => event.type === 'input_requested')).toHaveLength(1);
    expect(inputs.answerOf('call_9:1.1:name')).toBeUndefined();

    inputs.validateAnswer({ requestId: 'call_9:1.1:name', action: 'accept', content: { name: 'Ada' } });
    inputs.answer({ requestId: 'call_9:1.1:name', action: 'accept', content: { name: 'Ada' } });
    expect(inputs.answerOf('call_9:1.1:name')).toEqual({
      requestId: 'call_9:1.1:name',
      action: 'accept',
      content: { name: 'Ada' },
    });
    inputs.ask(question('call_9:1.1:name'), 1);
    expect(inputs.waiting).toBe(false);
  });

  it('the end of its call cancels a question still pending', () => {
    const { inputs } = setUp();
    inputs.ask(question('call_9:1.1:name'), 1);
    inputs.callFinished('call_9');
    expect(inputs.answerOf('call_9:1.1:name')).toMatchObject({ action: 'cancel', by: 'tool-call-ended' });
  });
});
