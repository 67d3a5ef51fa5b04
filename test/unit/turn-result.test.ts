import { describe, expect, it } from 'vitest';
import type { TurnBudget, TurnSpend } from '../../src/workflows/budget.js';
import {
  stopReason,
  type TurnStop,
  turnResult,
  withFinalAnswer,
  type ModelStep,
} from '../../src/workflows/turn-result.js';

const STARTED_AT = 1_700_000_000_000;
const budget: TurnBudget = { maxRounds: 3, maxToolCalls: 5, maxTokens: 1_000, maxDurationMs: 60_000 };
const identity = { conversationId: 'c1', turn: 4, messageId: 'm4' };
const usage = { inputTokens: 300, outputTokens: 20, totalTokens: 320 };

function spend(overrides: Partial<TurnSpend> = {}): TurnSpend {
  return { rounds: 2, toolCalls: 1, usage, startedAt: STARTED_AT, ...overrides };
}

describe('turnResult', () => {
  it('turn result: an answered turn completes with the answer, the spend and the workflow time it took', () => {
    const result = turnResult(identity, { kind: 'answered', answer: 'Hi.' }, spend(), budget, STARTED_AT + 1_500);

    expect(result).toStrictEqual({
      conversationId: 'c1',
      turn: 4,
      messageId: 'm4',
      answer: 'Hi.',
      stopReason: 'completed',
      rounds: 2,
      toolCalls: 1,
      usage,
      durationMs: 1_500,
    });
  });

  it('turn result: keeps the order of its fields (the ask result and turn_finished event are JSON in history)', () => {
    const stop: TurnStop = { kind: 'budget', limit: 'rounds', answer: 'Partial.', error: undefined };
    const over = turnResult(identity, stop, spend({ rounds: 4 }), budget, STARTED_AT);
    const failed = turnResult(identity, { kind: 'error', error: { type: 'X', message: 'm' } }, spend(), budget, 0);

    expect(Object.keys(over)).toEqual([
      'conversationId',
      'turn',
      'messageId',
      'answer',
      'stopReason',
      'rounds',
      'toolCalls',
      'usage',
      'durationMs',
      'overrun',
    ]);
    expect(Object.keys(failed).slice(-1)).toEqual(['error']);
  });

  it('turn result: a cancelled turn has no answer and no error', () => {
    const result = turnResult(identity, { kind: 'cancelled' }, spend(), budget, STARTED_AT);

    expect(result).toMatchObject({ answer: null, stopReason: 'cancelled' });
    expect(result).not.toHaveProperty('error');
    expect(result).not.toHaveProperty('overrun');
  });

  it('turn result: a failed model call ends the turn as error:<type> with the failure', () => {
    const error = { type: 'ModelBadRequest', message: 'bad request' };
    const result = turnResult(identity, { kind: 'error', error }, spend(), budget, STARTED_AT);

    expect(result).toMatchObject({ answer: null, stopReason: 'error:ModelBadRequest', error });
  });

  it('turn result: a budget stop names its limit and carries the final answer and how far it went over', () => {
    const stop: TurnStop = { kind: 'budget', limit: 'rounds', answer: 'What I found so far.' };
    const result = turnResult(identity, stop, spend({ rounds: 4, usage: { ...usage, totalTokens: 1_200 } }), budget, 0);

    expect(result).toMatchObject({
      answer: 'What I found so far.',
      stopReason: 'budget:rounds',
      rounds: 4,
      overrun: { rounds: 1, tokens: 200 },
    });
    expect(result).not.toHaveProperty('error');
  });

  it('turn result: a budget stop without a final answer has a null answer; a failed final call adds its error', () => {
    const plain = turnResult(identity, { kind: 'budget', limit: 'toolCalls' }, spend(), budget, STARTED_AT);
    const error = { type: 'ModelTimeout', message: 'timed out' };
    const failed = turnResult(identity, { kind: 'budget', limit: 'time', error }, spend(), budget, STARTED_AT);

    expect(plain).toMatchObject({ answer: null, stopReason: 'budget:toolCalls' });
    expect(plain).not.toHaveProperty('error');
    expect(failed).toMatchObject({ answer: null, stopReason: 'budget:time', error });
  });

  it('turn result: time past the limit shows as a time overrun', () => {
    const result = turnResult(identity, { kind: 'budget', limit: 'time' }, spend(), budget, STARTED_AT + 61_000);

    expect(result.overrun).toEqual({ time: 1_000 });
    expect(result.durationMs).toBe(61_000);
  });
});

describe('stopReason', () => {
  it('turn result: each stop kind has its stop reason', () => {
    expect(stopReason({ kind: 'answered', answer: null })).toBe('completed');
    expect(stopReason({ kind: 'cancelled' })).toBe('cancelled');
    expect(stopReason({ kind: 'budget', limit: 'tokens' })).toBe('budget:tokens');
    expect(stopReason({ kind: 'error', error: { type: 'Unknown', message: '' } })).toBe('error:Unknown');
  });
});

describe('withFinalAnswer', () => {
  const stop = { kind: 'budget', limit: 'rounds' } as const;

  it('final answer: a reply becomes the budget stop answer (null content stays null)', () => {
    const reply = (content: string | null): ModelStep => ({ kind: 'reply', message: { role: 'assistant', content } });

    expect(withFinalAnswer(stop, reply('Done.'))).toEqual({ ...stop, answer: 'Done.' });
    expect(withFinalAnswer(stop, reply(null))).toEqual({ ...stop, answer: null });
  });

  it('final answer: a failed final call keeps the budget stop reason and adds the error', () => {
    const error = { type: 'ModelRateLimited', message: 'slow down' };

    expect(withFinalAnswer(stop, { kind: 'error', error })).toEqual({ ...stop, error });
  });

  it('final answer: a cancelled final call brings neither an answer nor an error', () => {
    expect(withFinalAnswer(stop, { kind: 'cancelled' })).toBe(stop);
    expect(withFinalAnswer(stop, { kind: 'budget', limit: 'time' })).toBe(stop);
  });
});
