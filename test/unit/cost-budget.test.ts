import { describe, expect, it } from 'vitest';
import { overrun, resolveBudget, type TurnBudget } from '../../src/workflows/budget.js';
import { addCost, CostLedger, exhaustedCostLimit, hasCostBudget } from '../../src/workflows/cost-budget.js';
import type { ModelCallCost } from '../../src/shared/types.js';

const budget: TurnBudget = { ...resolveBudget(undefined), maxCostUsd: 1 };
const call = (usd: number, inputUsd: number): ModelCallCost => ({ priced: true, usd, inputUsd, source: 'configured' });
const unpriced: ModelCallCost = { priced: false, usd: null, reason: 'no price' };

describe('the cost budget', () => {
  it('cost budget: a limit is set only by the settings (no default) and for the turn or the conversation', () => {
    expect(resolveBudget(undefined).maxCostUsd).toBeUndefined();
    expect(resolveBudget({ maxCostUsd: 0.5 }).maxCostUsd).toBe(0.5);
    expect(hasCostBudget(resolveBudget(undefined), undefined)).toBe(false);
    expect(hasCostBudget(resolveBudget(undefined), { maxCostUsd: 3 })).toBe(true);
    expect(hasCostBudget(budget, undefined)).toBe(true);
  });

  it('cost budget: spent under the limit with a next call that fits lets the call start', () => {
    expect(exhaustedCostLimit({ usd: 0.5 }, { usd: 0.5 }, 0.4, budget, undefined)).toBeUndefined();
  });

  it('cost budget: a turn that reached its limit stops with cost', () => {
    expect(exhaustedCostLimit({ usd: 1 }, { usd: 1 }, 0, budget, undefined)).toBe('cost');
  });

  it('cost budget: a call whose least cost would go past what is left does not start', () => {
    expect(exhaustedCostLimit({ usd: 0.7 }, { usd: 0.7 }, 0.31, budget, undefined)).toBe('cost');
  });

  it('cost budget: the conversation limit counts every turn, and the turn limit is named first', () => {
    const unlimited = resolveBudget(undefined);
    expect(exhaustedCostLimit({ usd: 0.1 }, { usd: 2.95 }, 0.1, unlimited, { maxCostUsd: 3 })).toBe('conversationCost');
    expect(exhaustedCostLimit({ usd: 1 }, { usd: 3 }, 0, budget, { maxCostUsd: 3 })).toBe('cost');
  });

  it('cost budget: an unpriced call is counted as unpriced, never as zero dollars', () => {
    expect(addCost({ usd: 0.25 }, unpriced)).toEqual({ usd: 0.25, unpricedCalls: 1 });
    expect(addCost({ usd: 0.25 }, call(0.5, 0.1))).toEqual({ usd: 0.75 });
    expect(addCost({ usd: 0.25 }, undefined)).toEqual({ usd: 0.25 });
  });

  it('cost budget: the ledger keeps the conversation total and the last input cost, and carries both', () => {
    const ledger = new CostLedger(undefined);
    expect(ledger.carried()).toBeUndefined();
    ledger.record(call(0.3, 0.2));
    ledger.record(unpriced);
    expect(ledger.total).toEqual({ usd: 0.3, unpricedCalls: 1 });
    expect(ledger.nextCallUsd).toBe(0.2);

    const next = new CostLedger(ledger.carried());
    next.record(call(0.5, 0.4));
    expect(next.total).toEqual({ usd: 0.8, unpricedCalls: 1 });
    expect(next.carried()).toEqual({ usd: 0.8, unpricedCalls: 1, lastInputUsd: 0.4 });
  });

  it('cost budget: how far the turn went past its cost limit is its overrun', () => {
    const spend = { rounds: 2, toolCalls: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, startedAt: 0 };
    expect(overrun({ ...spend, cost: { usd: 1.25 } }, budget, 0)).toEqual({ cost: 0.25 });
    expect(overrun({ ...spend, cost: { usd: 0.5 } }, budget, 0)).toEqual({});
  });
});
