import { workflowInfo } from '@temporalio/workflow';
import type { ProviderContextEdit, ToolDefinition, UnavailableServer } from '../shared/types.js';
import type { TurnBudget, TurnSpend } from './budget.js';
import type { OutputFormat } from './structured-output.js';
import type { RecordedTools } from './recorded-once.js';
import type { TurnContext } from './turn-context.js';
import type { ContextWindow } from './context-window.js';
import type { TimeLimit } from './turn-approvals.js';

/** What a turn did about its context (./compaction.ts): how many summaries it made, and why it trimmed instead. */
export interface TurnCompaction {
  summaries: number;
  /** Summary calls scheduled in this turn, failed ones included (each gets its own idempotency key). */
  calls: number;
  /** The input limit the turn's later calls are trimmed to, once a summary failed (src/shared/context.ts). */
  trimTo?: number;
  /** Why the older turns were trimmed instead of summarized: said in the turn's result. */
  trimmed?: string;
  /** What the provider cleared or compacted itself in this turn's calls (`compaction: "provider"`). */
  providerEdits?: ProviderContextEdit[];
}

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
  /** The list the turn's listing may name by digest instead of recording it (the patch applied); else undefined. */
  knownTools: RecordedTools | undefined;
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
  /** What the turn did about its context window (./compaction.ts). */
  compaction: TurnCompaction;
  /** The conversation's window (`TurnContext.contextWindow`), or the turn's own; set on first use. */
  window?: ContextWindow;
  /** The MCP tasks this turn waits for or waited for, by server and task id, to the call that owns each (./tool-tasks.ts). */
  toolTasks?: Map<string, string>;
  /** Each model call's cost goes to the tenant's ledger (a tenant's turn, with its patch applied). */
  ledgered: boolean;
  /** The ledger writes are local activities (a ledgered turn, with its own patch applied). */
  ledgerLocally: boolean;
  /** Summary calls this turn sent to the ledger: each moves the place of the turn's later entries on by one. */
  ledgeredSummaries?: number;
  /** The turn's time limit, paused while a held model call waits for a person (./budget-pause.ts). */
  clock?: TimeLimit;
}

/** Tell the turn's watchers how far it got (the Web UI's progress, `status`). */
export function report(turn: TurnState, activity: string): void {
  turn.context.observer.progress({ spend: { ...turn.spend }, activity });
}

type Priority = NonNullable<ReturnType<typeof workflowInfo>['priority']>;

/**
 * The priority a tenant's activity names itself: Temporal would inherit the run's, but the worker sees only what the
 * activity names (its metrics carry the tenant). The run's own, or the tenant as the fairness key when the run was
 * started without one (a client that did not set it): then its activities are still shared out fairly. None without
 * a tenant.
 */
export function activityPriority(turn: TurnState): { priority?: Priority } {
  const { tenant } = turn.context.settings;
  if (tenant === undefined) return {};
  const own = workflowInfo().priority;
  return { priority: own?.fairnessKey ? own : { ...own, fairnessKey: tenant } };
}
