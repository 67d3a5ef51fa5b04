import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PausableDeadline } from '../../src/worker/mcp/elicitation.js';
import { askTheConversation } from '../../src/worker/activities/tool-calls/input-requests.js';
import type { InputPoll } from '../../src/workflows/input-requests.js';

/**
 * A tool call that is cancelled while its server waits for a person's answer (a worker stopped by a deploy) must leave
 * nothing running behind it: neither its timeout nor its poll of the conversation, or the stopping worker process stays
 * alive (and once its client is closed, dies retrying the poll).
 */

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

const timeout = () => new Error('Request timed out');

describe('PausableDeadline', () => {
  it('expires after its time, not counting the time it was paused', () => {
    const deadline = new PausableDeadline(1_000, timeout);
    vi.advanceTimersByTime(400);
    deadline.pause();
    vi.advanceTimersByTime(10_000);
    deadline.resume();
    vi.advanceTimersByTime(599);
    expect(deadline.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(deadline.signal.aborted).toBe(true);
  });

  it('cleared while paused (the call was cancelled during a question), it never starts again on resume', () => {
    const deadline = new PausableDeadline(1_000, timeout);
    deadline.pause();
    deadline.clear();
    deadline.resume();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5_000);
    expect(deadline.signal.aborted).toBe(false);
  });
});

describe('askTheConversation', () => {
  it("a cancelled call aborts the poll it is waiting on, not only its wait for the poll's answer", async () => {
    const cancelled = new AbortController();
    const polls: AbortSignal[] = [];
    const ask = askTheConversation(
      (_target, _poll: InputPoll, signal) => {
        polls.push(signal);
        return new Promise(() => undefined);
      },
      {
        target: { workflowId: 'conversation-a', runId: 'run-1' },
        callId: 'call-1',
        tool: { name: 'ask_user', server: 'test' },
        attempt: 1,
        cancelled: cancelled.signal,
      },
    );
    const answer = ask(
      { mode: 'form', message: 'Who are you?', requestedSchema: { type: 'object', properties: {} } },
      { waitMs: 60_000, signal: new AbortController().signal },
    );
    await vi.waitFor(() => expect(polls).toHaveLength(1));
    cancelled.abort(new Error('WORKER_SHUTDOWN'));
    await expect(answer).rejects.toThrow('WORKER_SHUTDOWN');
    expect(polls[0]!.aborted).toBe(true);
  });
});
