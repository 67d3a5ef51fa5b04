import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import type { RecordSpendInput, SpendEntry } from '../shared/spend.js';
import { utcDay } from '../shared/tenants.js';
import type { ModelCallResult } from '../shared/types.js';
import type { TurnState } from './turn-state.js';

// A tenant's turn sends each priced call's cost to the tenant's ledger of the day (docs/tenants.md,
// ./spend-ledger.ts): its model calls, its summary calls, and a sub-agent's calls from the sub-agent's own turn.

// A ledger write retries until it succeeds (no maximumAttempts): the call's result is recorded already, and its cost
// must reach the tenant's ledger once.
const LEDGER_WRITE_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
} as const;
const { recordSpend } = proxyActivities<Activities>(LEDGER_WRITE_OPTIONS);
// Local: the write runs in the workflow task that received the call's result, so it does not wait for a slot behind
// other tenants' model calls, nor for one more workflow task. Run again if the worker dies before the task completes:
// the ledger counts a call once.
const { recordSpend: recordSpendLocally } = proxyLocalActivities<Activities>(LEDGER_WRITE_OPTIONS);

/**
 * The patch of the tenants' spend ledgers: a tenant's turn sends each model call's cost to its ledger. Asked only in a
 * tenant's turns, so turns without a tenant replay as recorded.
 */
export const SPEND_LEDGER_PATCH = 'tenant-spend-ledger';

/**
 * The patch under which a tenant's ledger write is a local activity; turns recorded before it wrote through an
 * activity task, and replay so.
 */
export const LOCAL_LEDGER_WRITE_PATCH = 'local-ledger-write';

/**
 * The patch under which a summary call's cost goes to the ledger too (a write after the call); turns recorded before
 * it made none. Asked only when a ledgered turn's summary call finishes.
 */
export const SUMMARY_LEDGER_PATCH = 'summary-spend-ledger';

/**
 * Add a round's recorded call to the tenant's ledger of the day (workflow time: the same day on replay). Its place in
 * the turn counts the summary calls sent before it, so every entry of the turn has a place after the one before.
 */
export async function roundToLedger(turn: TurnState, round: number, result: ModelCallResult): Promise<void> {
  const input = ledgerInput(turn, round + (turn.ledgeredSummaries ?? 0), result);
  const summary = `spend · ${input.tenant} · turn ${turn.context.turn} round ${round}`;
  // One await, as deep as the write always was (see the note on await depth in ./turn.ts).
  if (turn.ledgerLocally) await recordSpendLocally.executeWithOptions({ ...LEDGER_WRITE_OPTIONS, summary }, [input]);
  else await recordSpend.executeWithOptions({ summary }, [input]);
}

/** A ledgered turn's summary call goes to the ledger too, once its patch is applied (asked only here). */
export function ledgersSummaries(turn: TurnState): boolean {
  return turn.ledgered && patched(SUMMARY_LEDGER_PATCH);
}

/**
 * Add a summary call's recorded cost to the ledger (when {@link ledgersSummaries}). Its place comes after the turn's
 * last call sent, and the next round's place after it.
 */
export async function summaryToLedger(turn: TurnState, index: number, result: ModelCallResult): Promise<void> {
  turn.ledgeredSummaries = (turn.ledgeredSummaries ?? 0) + 1;
  const input = ledgerInput(turn, turn.round + turn.ledgeredSummaries, result);
  const summary = `spend · ${input.tenant} · turn ${turn.context.turn} summary ${index}`;
  // Always local: no recorded turn wrote a summary's cost through an activity task.
  await recordSpendLocally.executeWithOptions({ ...LEDGER_WRITE_OPTIONS, summary }, [input]);
}

function ledgerInput(turn: TurnState, place: number, result: ModelCallResult): RecordSpendInput {
  const { context } = turn;
  const entry: SpendEntry = {
    conversationId: context.conversationId,
    turn: context.turn,
    round: place,
    usd: result.cost?.priced === true ? result.cost.usd : null,
    usage: result.usage,
    ...(context.agentOf !== undefined ? { agentOf: context.agentOf } : {}),
  };
  // Date.now() is Temporal's workflow time here (the sandbox's clock): the same day on replay.
  return { tenant: context.settings.tenant!, day: utcDay(Date.now()), entry };
}
