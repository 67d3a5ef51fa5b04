import type { TokenUsage } from './types.js';

/**
 * What one tenant spent on one UTC day (docs/tenants.md): the totals of its ledger workflow. Calls without a price
 * are counted in `unpricedCalls`, not in `usd` (which is then a lower bound).
 */
export interface SpendTotals {
  tenant: string;
  /** The UTC day, `YYYY-MM-DD`. */
  day: string;
  usd: number;
  unpricedCalls: number;
  /** Priced calls recorded: model calls, summary calls and sub-agents' calls. */
  calls: number;
  usage: TokenUsage;
  /** Turns with at least one model call that day (a sub-agent's calls count as its calling turn's). */
  turns: number;
  /** Conversations with at least one model call that day. */
  conversations: number;
  /**
   * The daily cost limit a person raised the tenant's `dailyCostUsd` to for this day (docs/tenants.md); absent when
   * nobody did.
   */
  raisedLimitUsd?: number;
}

/**
 * One priced call as the conversation recorded it (a model call, or a summary call), sent to its tenant's ledger.
 * `conversationId`, `turn` and `round` name the call: turns are numbered across the conversation's runs, and `round`
 * is the call's place in its turn (its round, plus the summary calls sent before it), so the name is the same on every
 * retry and replay, and grows with every call of the conversation.
 */
export interface SpendEntry {
  conversationId: string;
  turn: number;
  round: number;
  /** The call's price in US dollars; null for a call without a known price. */
  usd: number | null;
  usage: TokenUsage;
  /**
   * A sub-agent's call: the calling conversation's id (`conversationId` is then the sub-agent's own run). Counted in
   * the calls and the cost, not as a conversation or a turn.
   */
  agentOf?: string;
}

/** Input of the `recordSpend` activity: the entry and the ledger it goes to. */
export interface RecordSpendInput {
  tenant: string;
  day: string;
  entry: SpendEntry;
}

/** The workflow type of the ledgers. */
export const SPEND_LEDGER_WORKFLOW_TYPE = 'spendLedgerWorkflow';

/** The workflow id of a tenant's ledger of a day: readable, and derived, so no lookup finds it. */
export function spendLedgerWorkflowId(tenant: string, day: string): string {
  return `spend-${day}-${tenant}`;
}
