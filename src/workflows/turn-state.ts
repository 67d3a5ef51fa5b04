import type { ToolDefinition, UnavailableServer } from '../shared/types.js';
import type { TurnBudget, TurnSpend } from './budget.js';
import type { OutputFormat } from './structured-output.js';
import type { TurnContext } from './turn-context.js';

/** Everything a turn changes as it runs, in one object that the turn's functions share (./turn.ts, ./turn-tools.ts). */
export interface TurnState {
  readonly context: TurnContext;
  readonly budget: TurnBudget;
  readonly spend: TurnSpend;
  /**
   * Model calls started, not completed: a call abandoned by the time limit and the final-answer call after it carry
   * different idempotency keys.
   */
  round: number;
  /** The conversation's model, or the worker's default once the first call names it. */
  model: string | undefined;
  /** The turn's tools, listed by its first model call (no activity of their own) and used by every later call. */
  tools: ReadonlyMap<string, ToolDefinition>;
  toolsDigest: string | undefined;
  toolsListed: boolean;
  /** MCP servers the listing left out: the turn goes on without their tools. */
  unavailableServers: UnavailableServer[];
  /** The time limit fired: what was in flight was cancelled by the budget, not by the user. */
  timedOut: boolean;
  /** A cost budget limits this turn (and the patch that checks it was applied). */
  costLimited: boolean;
  /** The answer must be JSON matching this (structured output); undefined for a text answer. */
  output: OutputFormat | undefined;
  /** Answers sent back to the model because they did not match `output`. */
  corrections: number;
  /** Each model call's cost goes to the tenant's ledger (a tenant's turn, with its patch applied). */
  ledgered: boolean;
}

/** Tell the turn's watchers how far it got (the Web UI's progress, `status`). */
export function report(turn: TurnState, activity: string): void {
  turn.context.observer.progress({ spend: { ...turn.spend }, activity });
}
