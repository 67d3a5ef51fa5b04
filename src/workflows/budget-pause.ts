import { ActivityFailure, ApplicationFailure, condition, isCancellation, patched } from '@temporalio/workflow';
import type { ApprovalDecision, BudgetPause, PendingApproval } from '../shared/approval-messages.js';
import { FailureType } from '../shared/errors.js';
import { ZERO_COST } from '../shared/types.js';
import { formatCost } from '../shared/dollars.js';
import type { CostLimit } from './cost-budget.js';
import type { TurnStop } from './turn-result.js';
import type { TurnState } from './turn-state.js';

/**
 * Budgets that stop and ask (docs/cost.md, "Pause instead of fail"): a cost limit set to `pause` holds the model call
 * it forbids as a pending decision, beside the tool calls that wait for approval, so `approvals`, `approve`/`deny`,
 * chat, `serve` and the protocol's updates all act on it. Every `Date.now()` here is workflow time.
 */

/**
 * The patch of budget pauses: asked only when a limit set to `pause` is reached, so every other turn records the
 * commands it did before.
 */
export const BUDGET_PAUSE_PATCH = 'budget-pause';

/** What a tenant's model call refused by its daily limit says (the details of a `DailyCostLimit` failure). */
export interface DailyCostLimitDetails {
  tenant: string;
  day: string;
  limitUsd: number;
  spentUsd: number;
  nextCallUsd: number;
  /** The tenants file's `onDailyCostLimit` for the tenant. */
  onLimit: 'fail' | 'pause';
}

/** How a pause ended: the held call goes on (with a raised limit), or the turn stops. */
export type BudgetDecision = { kind: 'go'; maxCostUsd?: number } | { kind: 'stop'; stop: TurnStop };

/** The turn's or the conversation's limit set to `pause`: asks the patch, only then. */
export function pausesAt(turn: TurnState, limit: CostLimit): boolean {
  const action =
    limit === 'cost'
      ? turn.budget.onCostLimit
      : limit === 'conversationCost'
        ? turn.context.settings.conversationBudget?.onCostLimit
        : undefined;
  return action === 'pause' && patched(BUDGET_PAUSE_PATCH);
}

/** What the turn's or the conversation's limit holds, for the pending decision. */
export function costPause(turn: TurnState, limit: 'cost' | 'conversationCost'): BudgetPause {
  const { costs, settings } = turn.context;
  const [limitUsd, spentUsd] =
    limit === 'cost'
      ? [turn.budget.maxCostUsd ?? 0, (turn.spend.cost ?? ZERO_COST).usd]
      : [settings.conversationBudget?.maxCostUsd ?? 0, costs.total.usd];
  return { limit, limitUsd, spentUsd, nextCallUsd: costs.nextCallUsd };
}

/** The details of a model call's failure when the tenant's daily limit refused it; undefined for any other. */
export function dailyLimitOf(error: unknown): DailyCostLimitDetails | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (!(cause instanceof ApplicationFailure) || cause.type !== FailureType.DailyCostLimit) return undefined;
  return cause.details?.[0] as DailyCostLimitDetails | undefined;
}

/** The pause of a daily limit: `pause` in the tenants file, and the patch (asked only then). */
export function dailyPause(details: DailyCostLimitDetails): BudgetPause | undefined {
  if (details.onLimit !== 'pause' || !patched(BUDGET_PAUSE_PATCH)) return undefined;
  const { tenant, day, limitUsd, spentUsd, nextCallUsd } = details;
  return { limit: 'dailyCost', limitUsd, spentUsd, nextCallUsd, tenant, day };
}

const LIMIT_NAMES: Record<BudgetPause['limit'], string> = {
  cost: "the turn's cost budget (budget.maxCostUsd)",
  conversationCost: "the conversation's cost budget (conversationBudget.maxCostUsd)",
  dailyCost: "the tenant's daily cost limit (dailyCostUsd)",
};

/**
 * Hold the next model call as a pending decision and wait for it: `approve` lets the call go on (once, or with the limit
 * raised to `maxCostUsd`), `deny` stops the turn with the limit's stop reason and the decision, an interrupt cancels
 * the turn. The turn's time limit does not run meanwhile, and no timer waits: the pause lasts until someone decides.
 */
export async function awaitBudgetDecision(turn: TurnState, pause: BudgetPause): Promise<BudgetDecision> {
  const { context } = turn;
  const { approvals } = context;
  const clock = turn.clock!;
  const callId = `budget-${context.turn}-${turn.round}`;
  const pending: PendingApproval = {
    kind: 'budget',
    callId,
    turn: context.turn,
    tool: `budget:${pause.limit}`,
    server: 'budget',
    arguments: pause,
    reason:
      `${LIMIT_NAMES[pause.limit]} of ${usd(pause.limitUsd)} holds the next model call: ` +
      `${usd(pause.spentUsd)} spent, the call costs ${usd(pause.nextCallUsd)} or more`,
    requestedAt: new Date(Date.now()).toISOString(),
  };
  approvals.request(pending);
  clock.pause();
  let decision: ApprovalDecision;
  try {
    await condition(() => approvals.isDecided(callId));
    decision = approvals.take(callId)!;
  } catch (error) {
    if (!isCancellation(error)) throw error;
    if (!approvals.isDecided(callId)) {
      approvals.decide(callId, { decision: 'denied', by: 'interrupt', reason: 'the user interrupted the turn' });
    }
    approvals.take(callId);
    return { kind: 'stop', stop: { kind: 'cancelled' } };
  } finally {
    clock.resume();
  }
  if (decision.decision === 'denied') {
    return { kind: 'stop', stop: { kind: 'budget', limit: pause.limit, budgetDenied: decision } };
  }
  if (decision.maxCostUsd !== undefined) raise(turn, pause.limit, decision.maxCostUsd);
  return { kind: 'go', ...(decision.maxCostUsd !== undefined ? { maxCostUsd: decision.maxCostUsd } : {}) };
}

function usd(value: number): string {
  return formatCost({ usd: value });
}

/** A person raised the limit: the turn's for the rest of the turn, the conversation's for good (it is carried). */
function raise(turn: TurnState, limit: BudgetPause['limit'], maxCostUsd: number): void {
  if (limit === 'cost') turn.budget.maxCostUsd = maxCostUsd;
  else if (limit === 'conversationCost') {
    const { settings } = turn.context;
    settings.conversationBudget = { ...settings.conversationBudget, maxCostUsd };
  }
  // The tenant's: the held call's activity records it in the ledger of the day (DailyCostCheck.raiseToUsd).
}
