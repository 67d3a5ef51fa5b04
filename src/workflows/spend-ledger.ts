import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { SpendEntry, SpendTotals } from '../shared/spend.js';
import { ZERO_USAGE } from '../shared/types.js';
import { addUsage } from './budget.js';

/** A call's cost for the tenant's ledger; one conversation's calls arrive in order, each until it is recorded. */
export const spendSignal = defineSignal<[SpendEntry]>('spend');
/**
 * A person raised the tenant's daily cost limit for this day (approving a held call with `maxCostUsd`, docs/tenants.md):
 * the ledger keeps the highest, and the worker checks the tenant's calls against it from then on.
 */
export const raiseDailyLimitSignal = defineSignal<[number]>('raiseDailyLimit');
/** The ledger's totals so far. */
export const spendTotalsQuery = defineQuery<SpendTotals>('spendTotals');

/** How long after its day a ledger still takes entries (a turn held up by an outage records its calls late). */
export const LEDGER_GRACE_MS = 2 * 24 * 3600 * 1000;

/** What a ledger holds, and hands to its next run. */
export interface LedgerState {
  totals: SpendTotals;
  /** The last call counted of each conversation (`turn`, `round`): an entry at or before it is counted already. */
  marks: Record<string, [turn: number, round: number]>;
}

export interface SpendLedgerInput {
  tenant: string;
  day: string;
  state?: LedgerState;
}

/**
 * The ledger of one tenant's spend on one UTC day (docs/tenants.md). Each entry counts once: a conversation sends its
 * calls in order, each only after the previous one was recorded, so an entry at or before the conversation's mark is
 * one this ledger counted already (a retried activity's signal sent again). Pure, for the tests.
 */
export function applySpend(state: LedgerState, entry: SpendEntry): boolean {
  const mark = state.marks[entry.conversationId];
  if (mark !== undefined && (entry.turn < mark[0] || (entry.turn === mark[0] && entry.round <= mark[1]))) return false;
  const { totals } = state;
  // A sub-agent's run has a mark of its own (its calls arrive in order), but is its calling conversation's work.
  if (entry.agentOf === undefined) {
    if (mark === undefined) totals.conversations += 1;
    if (mark === undefined || entry.turn > mark[0]) totals.turns += 1;
  }
  if (entry.usd === null) totals.unpricedCalls += 1;
  else totals.usd += entry.usd;
  totals.calls += 1;
  totals.usage = addUsage(totals.usage, entry.usage);
  state.marks[entry.conversationId] = [entry.turn, entry.round];
  return true;
}

export function emptyLedger(tenant: string, day: string): LedgerState {
  return {
    totals: { tenant, day, usd: 0, unpricedCalls: 0, calls: 0, usage: ZERO_USAGE, turns: 0, conversations: 0 },
    marks: {},
  };
}

/**
 * A tenant's ledger of a day: takes `spend` signals until the day and its grace period are over, continues as new when
 * Temporal suggests it, and returns its totals.
 */
export async function spendLedgerWorkflow(input: SpendLedgerInput): Promise<LedgerState> {
  const state = input.state ?? emptyLedger(input.tenant, input.day);
  setHandler(spendSignal, (entry) => void applySpend(state, entry));
  setHandler(raiseDailyLimitSignal, (usd) => {
    // Sent again on a retry: the highest limit wins, so a second delivery changes nothing.
    if (typeof usd === 'number' && Number.isFinite(usd)) {
      state.totals.raisedLimitUsd = Math.max(state.totals.raisedLimitUsd ?? 0, usd);
    }
  });
  setHandler(spendTotalsQuery, () => state.totals);
  // Date.now() is workflow time here: the same on replay.
  const closesAt = Date.parse(`${input.day}T00:00:00Z`) + 24 * 3600 * 1000 + LEDGER_GRACE_MS;
  const rollOver = () => workflowInfo().continueAsNewSuggested;
  await condition(rollOver, Math.max(0, closesAt - Date.now()));
  await condition(allHandlersFinished);
  if (rollOver()) await continueAsNew<typeof spendLedgerWorkflow>({ ...input, state });
  return state;
}
