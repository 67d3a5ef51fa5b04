import { describe, expect, it } from 'vitest';
import { ZERO_USAGE } from '../../src/shared/types.js';
import type { ConversationOutcome, ConversationState } from '../../src/workflows/definitions.js';
import { continuedInput, lookBack, type EarlierRun } from '../../src/workflows/earlier-runs.js';
import type { TurnResult } from '../../src/workflows/turn-result.js';

const result: TurnResult = {
  conversationId: 'c1',
  turn: 2,
  messageId: 'm2',
  answer: 'two',
  stopReason: 'completed',
  rounds: 1,
  toolCalls: 0,
  usage: ZERO_USAGE,
  durationMs: 5,
};

const closedState: ConversationState = {
  transcript: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'one', id: 'm1' },
    { role: 'assistant', content: 'answer one' },
  ],
  transcriptOffset: 0,
  turns: 2,
  queue: [],
  seenMessageIds: ['m1', 'm2'],
  lastResult: result,
};

const completed = (outcome: Partial<ConversationOutcome> = {}): EarlierRun => ({
  found: true,
  runId: 'run-1',
  status: 'COMPLETED',
  outcome: {
    conversationId: 'c1',
    closedBecause: 'idle',
    state: closedState,
    settings: { idleTimeoutMs: 1_000 },
    ...outcome,
  },
});

/** What a fresh run took before it looked back: `messages` queued (its own state's queue). */
const took = (...ids: string[]): ConversationState => ({
  transcript: [],
  transcriptOffset: 0,
  turns: 0,
  queue: ids.map((id) => ({ id, content: `text ${id}` })),
  seenMessageIds: ids,
});

describe('a run that did not continue from another: what it does about earlier runs of its id', () => {
  it('lookBack: goes on with none, or with the run it was started from; else continues from what it found', () => {
    expect(lookBack({ conversationId: 'c1' }, { found: false })).toEqual({ kind: 'go-on' });
    expect(lookBack({ conversationId: 'c1' }, { found: false, unavailable: 'no visibility' })).toEqual({
      kind: 'go-on',
    });
    expect(lookBack({ conversationId: 'c1', previousRunId: 'run-1', state: closedState }, completed())).toEqual({
      kind: 'go-on',
    });
    expect(lookBack({ conversationId: 'c1' }, completed())).toEqual({ kind: 'reopen', runId: 'run-1' });
    expect(lookBack({ conversationId: 'c1', previousRunId: 'run-0' }, completed())).toEqual({
      kind: 'reopen',
      runId: 'run-1',
    });
    expect(lookBack({ conversationId: 'c1' }, completed({ closedBecause: 'ended' }))).toEqual({
      kind: 'ended',
      runId: 'run-1',
    });
    // A run that says it reopens an ended conversation does not bring it back.
    expect(
      lookBack({ conversationId: 'c1', previousRunId: 'run-1' }, completed({ state: { ...closedState, ended: true } })),
    ).toEqual({ kind: 'ended', runId: 'run-1' });
    expect(lookBack({ conversationId: 'c1' }, { found: true, runId: 'run-1', status: 'TERMINATED' })).toEqual({
      kind: 'ended',
      runId: 'run-1',
    });
  });

  it('continuedInput: a reopen keeps the closed run’s state and settings, and adds the messages it had not seen', () => {
    const input = continuedInput({ conversationId: 'c1' }, completed({ closeWhenIdle: true }), took('m2', 'm3'));
    expect(input).toEqual({
      conversationId: 'c1',
      settings: { idleTimeoutMs: 1_000 },
      closeWhenIdle: true,
      previousRunId: 'run-1',
      state: {
        ...closedState,
        queue: [{ id: 'm3', content: 'text m3' }],
        seenMessageIds: ['m1', 'm2', 'm3'],
      },
    });
    // Settings given with the start win over the closed run's.
    expect(continuedInput({ conversationId: 'c1', settings: { model: 'x' } }, completed(), took()).settings).toEqual({
      model: 'x',
    });
  });

  it('continuedInput: an ended conversation is carried as it was, marked ended, without what the run took', () => {
    const input = continuedInput(
      { conversationId: 'c1', settings: { model: 'x' } },
      completed({ closedBecause: 'ended', settings: { systemPrompt: 'Be brief.' } }),
      took('m3'),
    );
    expect(input).toEqual({
      conversationId: 'c1',
      settings: { systemPrompt: 'Be brief.' },
      previousRunId: 'run-1',
      state: { ...closedState, ended: true },
    });
  });

  it('continuedInput: a broken run has no result: the next run keeps its length and last result, and its id', () => {
    const broken: EarlierRun = {
      found: true,
      runId: 'run-1',
      status: 'FAILED',
      turns: 4,
      transcriptLength: 9,
      lastResult: result,
    };
    expect(continuedInput({ conversationId: 'c1' }, broken, took('m3'))).toEqual({
      conversationId: 'c1',
      previousRunId: 'run-1',
      state: {
        transcript: [],
        transcriptOffset: 9,
        turns: 4,
        queue: [],
        seenMessageIds: [],
        lastResult: result,
        ended: true,
      },
    });
  });
});
