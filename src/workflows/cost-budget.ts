import type { CostSpend, ModelCallCost } from '../shared/types.js';

/** The turn's cost limit, as `TurnBudget.maxCostUsd` holds it. */
interface TurnCostLimit {
  maxCostUsd?: number;
}

/** Limits of a whole conversation, across its turns, runs and continue-as-new (docs/cost.md). */
export interface ConversationBudget {
  /**
   * US dollars the model calls of the whole conversation may cost; default none. A model call does not start once
   * the conversation has spent this, or when its least cost (the input of the call before) would go past it.
   * @minimum 0
   */
  maxCostUsd?: number;
  /**
   * What the model call that `maxCostUsd` forbids does: `fail` ends the turn (`budget:conversationCost`), `pause`
   * waits for a person to approve or deny it (docs/cost.md, "Pause instead of fail"). Default `fail`.
   */
  onCostLimit?: CostLimitAction;
}

/** What a call that a cost limit forbids does: end the turn (`fail`), or wait for a person's decision (`pause`). */
export type CostLimitAction = 'fail' | 'pause';

/** What a conversation has spent, carried from run to run. */
export interface ConversationCost extends CostSpend {
  /**
   * The input's cost of the conversation's latest priced model call: the next call sends that input again (and
   * more), so it is the least the next call costs.
   * @minimum 0
   */
  lastInputUsd?: number;
}

/** The cost limits: the turn's, the conversation's, and the tenant's of the day (docs/tenants.md). */
export type CostLimit = 'cost' | 'conversationCost' | 'dailyCost';

/** `spent` with one model call's cost added; a call without a price counts in `unpricedCalls`, never as zero. */
export function addCost(spent: CostSpend, cost: ModelCallCost | undefined): CostSpend {
  if (cost === undefined) return spent;
  if (!cost.priced) return { ...spent, unpricedCalls: (spent.unpricedCalls ?? 0) + 1 };
  return { ...spent, usd: spent.usd + cost.usd };
}

/** A conversation's spend, recorded call by call as the turns record their results. */
export class CostLedger {
  private spent: ConversationCost;

  constructor(carried: ConversationCost | undefined) {
    this.spent = { usd: carried?.usd ?? 0, ...withoutUsd(carried) };
  }

  get total(): CostSpend {
    return conversationCost({ cost: this.spent });
  }

  /** The least the next model call costs: the input of the call before, sent again. */
  get nextCallUsd(): number {
    return this.spent.lastInputUsd ?? 0;
  }

  record(cost: ModelCallCost | undefined): void {
    this.spent = { ...this.spent, ...addCost(this.spent, cost) };
    if (cost?.priced) this.spent.lastInputUsd = cost.inputUsd;
  }

  /** What a sub-agent's turn spent, charged to this conversation (its calls were recorded in its own history). */
  charge(spent: CostSpend): void {
    this.spent = {
      ...this.spent,
      usd: this.spent.usd + spent.usd,
      ...(spent.unpricedCalls ? { unpricedCalls: (this.spent.unpricedCalls ?? 0) + spent.unpricedCalls } : {}),
    };
  }

  /** For the carried state: absent until the conversation made a call that recorded a cost. */
  carried(): ConversationCost | undefined {
    return this.spent.usd === 0 && this.spent.unpricedCalls === undefined && this.spent.lastInputUsd === undefined
      ? undefined
      : { ...this.spent };
  }
}

function withoutUsd(carried: ConversationCost | undefined): Omit<ConversationCost, 'usd'> {
  if (carried === undefined) return {};
  const { usd: _usd, ...rest } = carried;
  return rest;
}

/** What a conversation's carried state says it spent (nothing when it has no `cost`: it made no priced call). */
export function conversationCost(state: { cost?: ConversationCost }): CostSpend {
  const { lastInputUsd: _estimate, ...spent } = state.cost ?? { usd: 0 };
  return spent;
}

/** Whether a cost budget is set for the turn or the conversation. */
export function hasCostBudget(budget: TurnCostLimit, conversation: ConversationBudget | undefined): boolean {
  return budget.maxCostUsd !== undefined || conversation?.maxCostUsd !== undefined;
}

/**
 * Which cost limit, if any, forbids the next model call: one that was reached, or one that the call's least cost
 * (`nextCallUsd`, the input of the call before) would go past. Calls without a price count nothing here: a turn with
 * a cost budget never makes one (the worker refuses them).
 */
export function exhaustedCostLimit(
  turnSpent: CostSpend,
  conversationSpent: CostSpend,
  nextCallUsd: number,
  budget: TurnCostLimit,
  conversation: ConversationBudget | undefined,
): CostLimit | undefined {
  const over = (spent: number, limit: number | undefined) =>
    limit !== undefined && (spent >= limit || spent + nextCallUsd > limit);
  if (over(turnSpent.usd, budget.maxCostUsd)) return 'cost';
  if (over(conversationSpent.usd, conversation?.maxCostUsd)) return 'conversationCost';
  return undefined;
}

export function isCostLimit(limit: string): limit is CostLimit {
  return limit === 'cost' || limit === 'conversationCost' || limit === 'dailyCost';
}
