import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { EventPolls } from '../../src/workflows/event-polls.js';
import {
  DEFAULT_POLL_WAIT_MS,
  EventLog,
  MAX_POLL_WAIT_MS,
  MAX_WAITING_POLLS,
  StreamFailureType,
} from '../../src/workflows/stream-events.js';

/** A `wait` that never resolves by itself: records each wait, and the test releases it. */
function recordingWait() {
  const waits: { ready: () => boolean; timeoutMs: number; release: () => void }[] = [];
  const wait = (ready: () => boolean, timeoutMs: number) =>
    new Promise<void>((resolve) => waits.push({ ready, timeoutMs, release: resolve }));
  return { waits, wait };
}

function failureType(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof ApplicationFailure ? (error.type ?? undefined) : 'not an ApplicationFailure';
  }
  return undefined;
}

describe('EventPolls', () => {
  it('polls: answers at once when there are events at or after from', async () => {
    const events = new EventLog();
    events.startTurn(1, 'm1');
    const { waits, wait } = recordingWait();

    const result = await new EventPolls(events, 'c1').poll({ from: 0 }, wait);

    expect(waits).toHaveLength(0);
    expect(result).toEqual({
      events: [{ type: 'turn_started', turn: 1, messageId: 'm1', offset: 0 }],
      next: 1,
      truncated: false,
      closing: false,
    });
  });

  it('polls: without events, waits until one comes, for the asked time capped at the maximum', async () => {
    const events = new EventLog();
    const polls = new EventPolls(events, 'c1');
    const { waits, wait } = recordingWait();

    const first = polls.poll({ from: 0, waitMs: 10 * MAX_POLL_WAIT_MS }, wait);
    const second = polls.poll(undefined, wait);
    expect(waits.map((entry) => entry.timeoutMs)).toEqual([MAX_POLL_WAIT_MS, DEFAULT_POLL_WAIT_MS]);
    expect(waits[0]?.ready()).toBe(false);

    events.startTurn(1, 'm1');
    expect(waits[0]?.ready()).toBe(true);
    for (const entry of waits) entry.release();
    expect((await first).events).toHaveLength(1);
    expect((await second).events).toHaveLength(1);
  });

  it('polls: a poll with waitMs 0 answers at once, empty', async () => {
    const { waits, wait } = recordingWait();

    await expect(new EventPolls(new EventLog(), 'c1').poll({ waitMs: 0 }, wait)).resolves.toMatchObject({
      events: [],
      closing: false,
    });
    expect(waits).toHaveLength(0);
  });

  it('polls: while the run closes, waiting polls are released and new ones answer at once with closing', async () => {
    const polls = new EventPolls(new EventLog(), 'c1');
    const { waits, wait } = recordingWait();
    const waiting = polls.poll({}, wait);

    polls.closing = true;
    expect(waits[0]?.ready()).toBe(true);
    waits[0]?.release();
    await expect(waiting).resolves.toMatchObject({ closing: true });
    await expect(polls.poll({}, wait)).resolves.toMatchObject({ closing: true });
    expect(waits).toHaveLength(1);
  });

  it('polls validator: rejects a malformed request and more than MAX_WAITING_POLLS waiting polls', async () => {
    const polls = new EventPolls(new EventLog(), 'c1');
    const { waits, wait } = recordingWait();

    expect(failureType(() => polls.validate({ from: 1.5 }))).toBe(StreamFailureType.InvalidPoll);
    expect(failureType(() => polls.validate({ waitMs: -1 }))).toBe(StreamFailureType.InvalidPoll);
    expect(failureType(() => polls.validate(undefined))).toBeUndefined();

    const waiting = Array.from({ length: MAX_WAITING_POLLS }, () => polls.poll({}, wait));
    expect(failureType(() => polls.validate({}))).toBe(StreamFailureType.TooManySubscribers);
    waits[0]?.release();
    await waiting[0];
    expect(failureType(() => polls.validate({}))).toBeUndefined();
  });
});
