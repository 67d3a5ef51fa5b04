import type { CostSpend, TokenUsage } from '../shared/types.js';
import type { CostLimit, CostLimitAction } from './cost-budget.js';

/** Limits of one turn. Every limit is checked before each model or tool call, from what the workflow recorded. */
export interface TurnBudget {
  /**
   * Model calls in one turn, not counting the final-answer call. Default {@link DEFAULT_MAX_ROUNDS}.
   * @asType integer
   * @minimum 0
   */
  maxRounds: number;
  /**
   * Tool calls dispatched in one turn. Default {@link DEFAULT_MAX_TOOL_CALLS}.
   * @asType integer
   * @minimum 0
   */
  maxToolCalls: number;
  /**
   * Total tokens (input + output, from each call's `usage`) in one turn. Default {@link DEFAULT_MAX_TOKENS}.
   * @asType integer
   * @minimum 0
   */
  maxTokens: number;
  /**
   * Workflow time for one turn, in milliseconds. Default {@link DEFAULT_MAX_DURATION_MS} (10 minutes).
   * @asType integer
   * @minimum 0
   */
  maxDurationMs: number;
  /**
   * US dollars the turn's model calls may cost, priced by the worker (docs/cost.md); default none. A model call does
   * not start once the turn has spent this, or when its least cost (the input of the call before) would go past it.
   * @minimum 0
   */
  maxCostUsd?: number;
  /**
   * What the model call that `maxCostUsd` forbids does: `fail` ends the turn (`budget:cost`), `pause` waits for a
   * person to approve it (once, or with a higher limit) or deny it, as a tool call waits for approval
   * (docs/cost.md, "Pause instead of fail"). Default `fail`.
   */
  onCostLimit?: CostLimitAction;
  /**
   * Workflow time one tool call may wait for its MCP task (docs/mcp.md, "Tasks"), in milliseconds; the wait does not
   * count against `maxDurationMs`. Default {@link DEFAULT_MAX_TASK_WAIT_MS} (6 hours). A task still working then is
   * cancelled and the model reads that it took too long.
   * @asType integer
   * @minimum 0
   */
  maxTaskWaitMs?: number;
}

export const DEFAULT_MAX_TASK_WAIT_MS = 6 * 60 * 60 * 1000;

export const DEFAULT_MAX_ROUNDS = 20;
export const DEFAULT_MAX_TOOL_CALLS = 50;
export const DEFAULT_MAX_TOKENS = 500_000;
export const DEFAULT_MAX_DURATION_MS = 10 * 60 * 1000;

export const DEFAULT_BUDGET: TurnBudget = {
  maxRounds: DEFAULT_MAX_ROUNDS,
  maxToolCalls: DEFAULT_MAX_TOOL_CALLS,
  maxTokens: DEFAULT_MAX_TOKENS,
  maxDurationMs: DEFAULT_MAX_DURATION_MS,
};

export type BudgetLimit = 'rounds' | 'toolCalls' | 'tokens' | 'time' | CostLimit;

/** What a turn has spent so far: only numbers the workflow recorded, so replay computes the same. */
export interface TurnSpend {
  rounds: number;
  toolCalls: number;
  usage: TokenUsage;
  /** What the turn's model calls cost; absent until a call recorded a cost. */
  cost?: CostSpend;
  /** Workflow time (ms since epoch) when the turn started. */
  startedAt: number;
  /**
   * Workflow time the turn spent waiting for a person (approvals, docs/approvals.md): it does not count against
   * `maxDurationMs`. Absent until the turn first waits.
   */
  waitedMs?: number;
}

/** Workflow time the turn has spent on its own work by `now`: since it started, less its waits for a person. */
export function activeTime(spend: TurnSpend, now: number): number {
  return now - spend.startedAt - (spend.waitedMs ?? 0);
}

export function resolveBudget(overrides: Partial<TurnBudget> | undefined): TurnBudget {
  const budget = { ...DEFAULT_BUDGET };
  for (const key of Object.keys(DEFAULT_BUDGET) as ('maxRounds' | 'maxToolCalls' | 'maxTokens' | 'maxDurationMs')[]) {
    const value = overrides?.[key];
    if (value !== undefined) budget[key] = value;
  }
  // No default: a turn has a cost limit only when its settings give one.
  if (overrides?.maxCostUsd !== undefined) budget.maxCostUsd = overrides.maxCostUsd;
  // Only when set, so the budget a turn records is as before for conversations that do not set it.
  if (overrides?.maxTaskWaitMs !== undefined) budget.maxTaskWaitMs = overrides.maxTaskWaitMs;
  if (overrides?.onCostLimit !== undefined) budget.onCostLimit = overrides.onCostLimit;
  return budget;
}

/** Which limit, if any, forbids another model call now. Checked in a fixed order so the reason is stable. */
export function exhaustedLimit(spend: TurnSpend, budget: TurnBudget, now: number): BudgetLimit | undefined {
  if (spend.rounds >= budget.maxRounds) return 'rounds';
  if (spend.toolCalls >= budget.maxToolCalls) return 'toolCalls';
  if (spend.usage.totalTokens >= budget.maxTokens) return 'tokens';
  if (activeTime(spend, now) >= budget.maxDurationMs) return 'time';
  return undefined;
}

/** How many of `requested` tool calls fit in what is left of the tool-call budget. */
export function toolCallsAllowed(spend: TurnSpend, budget: TurnBudget, requested: number): number {
  return Math.max(0, Math.min(requested, budget.maxToolCalls - spend.toolCalls));
}

/** The `max_completion_tokens` for the next model call: never more than the tokens left in the turn. */
export function completionTokenLimit(spend: TurnSpend, budget: TurnBudget, configured: number | undefined): number {
  const left = Math.max(1, budget.maxTokens - spend.usage.totalTokens);
  return configured === undefined ? left : Math.min(configured, left);
}

/** Milliseconds left before the time limit (never negative). */
export function timeLeft(spend: TurnSpend, budget: TurnBudget, now: number): number {
  return Math.max(0, budget.maxDurationMs - activeTime(spend, now));
}

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: TokenUsage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  // The parts priced apart only when some call reported them, so usage without them stays as it was recorded.
  for (const part of ['cacheReadTokens', 'cacheWriteTokens', 'reasoningTokens'] as const) {
    const total = (a[part] ?? 0) + (b[part] ?? 0);
    if (total > 0) sum[part] = total;
  }
  return sum;
}

/** By how much a turn went past its limits (the final-answer call may exceed them); zero fields are left out. */
export function overrun(spend: TurnSpend, budget: TurnBudget, now: number): Partial<Record<BudgetLimit, number>> {
  const result: Partial<Record<BudgetLimit, number>> = {};
  if (spend.rounds > budget.maxRounds) result.rounds = spend.rounds - budget.maxRounds;
  if (spend.toolCalls > budget.maxToolCalls) result.toolCalls = spend.toolCalls - budget.maxToolCalls;
  if (spend.usage.totalTokens > budget.maxTokens) result.tokens = spend.usage.totalTokens - budget.maxTokens;
  const elapsed = activeTime(spend, now);
  if (elapsed > budget.maxDurationMs) result.time = elapsed - budget.maxDurationMs;
  const spentUsd = spend.cost?.usd ?? 0;
  if (budget.maxCostUsd !== undefined && spentUsd > budget.maxCostUsd) result.cost = spentUsd - budget.maxCostUsd;
  return result;
}
