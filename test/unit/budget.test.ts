import { describe, expect, it } from 'vitest';
import {
  addUsage,
  completionTokenLimit,
  DEFAULT_BUDGET,
  DEFAULT_MAX_DURATION_MS,
  DEFAULT_MAX_ROUNDS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TOOL_CALLS,
  exhaustedLimit,
  overrun,
  resolveBudget,
  timeLeft,
  toolCallsAllowed,
  type TurnBudget,
  type TurnSpend,
} from '../../src/workflows/budget.js';
import { ZERO_USAGE } from '../../src/shared/types.js';

const STARTED_AT = 1_700_000_000_000;

const budget: TurnBudget = { maxRounds: 3, maxToolCalls: 5, maxTokens: 1_000, maxDurationMs: 60_000 };

function spend(overrides: Partial<Omit<TurnSpend, 'usage'>> & { totalTokens?: number } = {}): TurnSpend {
  const { totalTokens = 0, ...rest } = overrides;
  return {
    rounds: 0,
    toolCalls: 0,
    usage: { inputTokens: totalTokens, outputTokens: 0, totalTokens },
    startedAt: STARTED_AT,
    ...rest,
  };
}

describe('resolveBudget', () => {
  it('budget: with no overrides every limit is the documented default', () => {
    expect(resolveBudget(undefined)).toEqual({
      maxRounds: DEFAULT_MAX_ROUNDS,
      maxToolCalls: DEFAULT_MAX_TOOL_CALLS,
      maxTokens: DEFAULT_MAX_TOKENS,
      maxDurationMs: DEFAULT_MAX_DURATION_MS,
    });
    expect(DEFAULT_MAX_DURATION_MS).toBe(10 * 60 * 1000);
  });

  it('budget: an override replaces only its own limit and undefined members keep the default', () => {
    expect(resolveBudget({ maxToolCalls: 2, maxTokens: undefined })).toEqual({ ...DEFAULT_BUDGET, maxToolCalls: 2 });
  });

  it('budget: an override of 0 is kept, not mistaken for a missing value', () => {
    expect(resolveBudget({ maxRounds: 0 }).maxRounds).toBe(0);
  });

  it('budget: resolving never mutates DEFAULT_BUDGET', () => {
    const before = { ...DEFAULT_BUDGET };
    const resolved = resolveBudget({ maxRounds: 1 });
    resolved.maxTokens = 7;
    expect(DEFAULT_BUDGET).toEqual(before);
  });
});

describe('exhaustedLimit', () => {
  it('budget: a fresh turn may call the model', () => {
    expect(exhaustedLimit(spend(), budget, STARTED_AT)).toBeUndefined();
  });

  it('budget: one below every limit still allows another model call', () => {
    const almost = spend({ rounds: 2, toolCalls: 4, totalTokens: 999 });
    expect(exhaustedLimit(almost, budget, STARTED_AT + 59_999)).toBeUndefined();
  });

  it('budget: stops after maxRounds model calls', () => {
    expect(exhaustedLimit(spend({ rounds: 3 }), budget, STARTED_AT)).toBe('rounds');
  });

  it('budget: stops after maxToolCalls tool calls', () => {
    expect(exhaustedLimit(spend({ toolCalls: 5 }), budget, STARTED_AT)).toBe('toolCalls');
  });

  it('budget: stops when total tokens reach maxTokens', () => {
    expect(exhaustedLimit(spend({ totalTokens: 1_000 }), budget, STARTED_AT)).toBe('tokens');
  });

  it('budget: stops when workflow time reaches maxDurationMs', () => {
    expect(exhaustedLimit(spend(), budget, STARTED_AT + 60_000)).toBe('time');
  });

  it('budget: when several limits are reached the reason is stable: rounds, toolCalls, tokens, time', () => {
    const late = STARTED_AT + 120_000;
    expect(exhaustedLimit(spend({ rounds: 9, toolCalls: 9, totalTokens: 9_999 }), budget, late)).toBe('rounds');
    expect(exhaustedLimit(spend({ toolCalls: 9, totalTokens: 9_999 }), budget, late)).toBe('toolCalls');
    expect(exhaustedLimit(spend({ totalTokens: 9_999 }), budget, late)).toBe('tokens');
  });
});

describe('toolCallsAllowed', () => {
  it('budget: all requested tool calls run while the budget has room', () => {
    expect(toolCallsAllowed(spend({ toolCalls: 1 }), budget, 3)).toBe(3);
  });

  it('budget: a parallel batch is cut to what is left of maxToolCalls', () => {
    expect(toolCallsAllowed(spend({ toolCalls: 3 }), budget, 4)).toBe(2);
  });

  it('budget: no tool call is allowed once the budget is used up, or overspent', () => {
    expect(toolCallsAllowed(spend({ toolCalls: 5 }), budget, 2)).toBe(0);
    expect(toolCallsAllowed(spend({ toolCalls: 7 }), budget, 2)).toBe(0);
  });
});

describe('completionTokenLimit', () => {
  it('budget: without a configured limit max_completion_tokens is the tokens left in the turn', () => {
    expect(completionTokenLimit(spend({ totalTokens: 400 }), budget, undefined)).toBe(600);
  });

  it('budget: a configured limit below the tokens left is sent as it is', () => {
    expect(completionTokenLimit(spend({ totalTokens: 400 }), budget, 100)).toBe(100);
  });

  it('budget: a configured limit above the tokens left is capped to them', () => {
    expect(completionTokenLimit(spend({ totalTokens: 950 }), budget, 100)).toBe(50);
  });

  it('budget: with no tokens left max_completion_tokens is 1, never 0 or negative', () => {
    expect(completionTokenLimit(spend({ totalTokens: 1_000 }), budget, undefined)).toBe(1);
    expect(completionTokenLimit(spend({ totalTokens: 5_000 }), budget, 100)).toBe(1);
  });
});

describe('timeLeft', () => {
  it('budget: time left counts down from maxDurationMs and never goes negative', () => {
    expect(timeLeft(spend(), budget, STARTED_AT)).toBe(60_000);
    expect(timeLeft(spend(), budget, STARTED_AT + 45_000)).toBe(15_000);
    expect(timeLeft(spend(), budget, STARTED_AT + 60_000)).toBe(0);
    expect(timeLeft(spend(), budget, STARTED_AT + 90_000)).toBe(0);
  });
});

describe('time spent waiting for a person (docs/approvals.md)', () => {
  it('does not count against maxDurationMs: time left, the limit and the overrun leave it out', () => {
    const waited = spend({ waitedMs: 3 * 86_400_000 });
    const now = STARTED_AT + 3 * 86_400_000 + 45_000;
    expect(timeLeft(waited, budget, now)).toBe(15_000);
    expect(exhaustedLimit(waited, budget, now)).toBeUndefined();
    expect(exhaustedLimit(waited, budget, now + 15_000)).toBe('time');
    expect(overrun(waited, budget, now + 16_000)).toEqual({ time: 1_000 });
  });
});

describe('addUsage', () => {
  it('budget: usage adds field by field and ZERO_USAGE is neutral', () => {
    const a = { inputTokens: 10, outputTokens: 3, totalTokens: 13 };
    const b = { inputTokens: 5, outputTokens: 7, totalTokens: 12 };
    expect(addUsage(a, b)).toEqual({ inputTokens: 15, outputTokens: 10, totalTokens: 25 });
    expect(addUsage(ZERO_USAGE, a)).toEqual(a);
    expect(ZERO_USAGE).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });
});

describe('overrun', () => {
  it('budget: a turn within its limits reports no overrun, even exactly at them', () => {
    expect(overrun(spend(), budget, STARTED_AT)).toEqual({});
    expect(overrun(spend({ rounds: 3, toolCalls: 5, totalTokens: 1_000 }), budget, STARTED_AT + 60_000)).toEqual({});
  });

  it('budget: the final-answer call past the limits reports by how much, per limit, leaving zero fields out', () => {
    expect(overrun(spend({ rounds: 4, totalTokens: 1_250 }), budget, STARTED_AT + 61_500)).toEqual({
      rounds: 1,
      tokens: 250,
      time: 1_500,
    });
    expect(overrun(spend({ toolCalls: 6 }), budget, STARTED_AT)).toEqual({ toolCalls: 1 });
  });
});
