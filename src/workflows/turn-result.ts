import type { ApprovalDecision } from '../shared/approval-messages.js';
import type {
  AssistantMessage,
  CostSpend,
  JsonValue,
  ProviderContextEdit,
  TokenUsage,
  UnavailableServer,
} from '../shared/types.js';
import { ZERO_COST } from '../shared/types.js';
import { type BudgetLimit, overrun, type TurnBudget, type TurnSpend } from './budget.js';

/**
 * Why a turn stopped: `completed` (the model answered), `budget:<limit>` (a limit of the turn's budget was reached),
 * `cancelled` (interrupted), or `error:<type>` (it failed; the result's `error` says how).
 */
export type StopReason = 'completed' | `budget:${BudgetLimit}` | 'cancelled' | `error:${string}`;

/** Why a turn failed, as its result and its `turn_finished` event carry it. */
export interface TurnError {
  type: string;
  message: string;
}

export interface TurnResult {
  conversationId: string;
  /**
   * The turn's number in the conversation, from 1.
   * @asType integer
   * @minimum 1
   */
  turn: number;
  /** Id of the user message this turn answered. */
  messageId: string;
  /** The model's answer; `null` when the turn ended without one (cancelled, an error, or a budget stop without a final call). */
  answer: string | null;
  stopReason: StopReason;
  /**
   * Model calls made, including the final-answer call.
   * @asType integer
   * @minimum 0
   */
  rounds: number;
  /**
   * Tool calls dispatched.
   * @asType integer
   * @minimum 0
   */
  toolCalls: number;
  usage: TokenUsage;
  /** What the turn's model calls cost (docs/cost.md); absent in results of releases that did not price calls. */
  cost?: CostSpend;
  /** What the conversation's model calls cost so far, this turn included; absent like `cost`. */
  conversationCost?: CostSpend;
  /**
   * Workflow time the turn took, in milliseconds.
   * @asType integer
   * @minimum 0
   */
  durationMs: number;
  /** How far the final-answer call went past the budget, per limit. */
  overrun?: Partial<Record<BudgetLimit, number>>;
  error?: TurnError;
  /** MCP servers whose tools this turn went without, because they could not be listed; absent when none. */
  unavailableServers?: UnavailableServer[];
  /**
   * The answer parsed, when the turn asked for structured output (`output`) and the answer matched its schema; absent
   * otherwise (then `error` has type `OutputInvalid` when the answer did not match).
   */
  output?: JsonValue;
  /**
   * What the turn did because the conversation outgrew the model's window (docs/models.md#compaction); absent when it
   * did nothing.
   */
  compaction?: TurnCompactionResult;
  /**
   * A cost limit set to `pause` held a model call and a person denied it (docs/cost.md, "Pause instead of fail"): the
   * decision, with who denied it and why. The stop reason names the limit (`budget:cost`, ...). Absent otherwise.
   */
  budgetDenied?: ApprovalDecision;
}

/** The `compaction` of a turn's result. */
export interface TurnCompactionResult {
  /**
   * Summaries made in this turn, each replacing older messages in what the model sees (`history` shows them).
   * @asType integer
   * @minimum 0
   */
  summaries: number;
  /**
   * Present when a summary failed (after its retries, refused by the content filter, or longer than what it
   * replaced): the older turns were trimmed from the model's input instead, and this says why.
   */
  trimmed?: string;
  /**
   * With `settings.compaction: "provider"`: what the provider compacted or cleared in this turn's model calls, in order
   * (docs/models.md#provider-native-compaction); absent when it did nothing.
   */
  providerEdits?: ProviderContextEdit[];
}

/**
 * How a turn's loop stopped. A budget stop carries what the final-answer call (made outside the loop) brought: its
 * answer, or its failure; neither when there was no such call or it was cancelled.
 */
export type TurnStop =
  | { kind: 'answered'; answer: string | null; output?: JsonValue }
  | {
      kind: 'budget';
      limit: BudgetLimit;
      answer?: string | null;
      error?: TurnError;
      output?: JsonValue;
      budgetDenied?: ApprovalDecision;
    }
  | { kind: 'cancelled' }
  | { kind: 'error'; error: TurnError; answer?: string | null };

/** What one model call brought the loop: the model's reply, or how the turn stops. */
export type ModelStep = { kind: 'reply'; message: AssistantMessage } | TurnStop;

/** A budget stop with what the final-answer call brought: its answer or its failure (a cancelled call brings neither). */
export function withFinalAnswer(stop: Extract<TurnStop, { kind: 'budget' }>, final: ModelStep): TurnStop {
  if (final.kind === 'reply') return { ...stop, answer: final.message.content };
  if (final.kind === 'error') return { ...stop, error: final.error };
  return stop;
}

/** Which message a turn answered, for its result. */
export interface TurnIdentity {
  conversationId: string;
  turn: number;
  messageId: string;
}

/**
 * The result of a turn that stopped with `stop` after spending `spend`, at workflow time `now`, without the tools of
 * `unavailableServers`. Pure.
 */
export function turnResult(
  identity: TurnIdentity,
  stop: TurnStop,
  spend: TurnSpend,
  budget: TurnBudget,
  now: number,
  unavailableServers: readonly UnavailableServer[] = [],
  extras: { conversationCost?: CostSpend; compaction?: TurnCompactionResult } = {},
): TurnResult {
  const costs = extras;
  const compaction = extras.compaction;
  const over = overrun(spend, budget, now);
  const error = stop.kind === 'error' || stop.kind === 'budget' ? stop.error : undefined;
  return {
    conversationId: identity.conversationId,
    turn: identity.turn,
    messageId: identity.messageId,
    answer: stop.kind === 'answered' || stop.kind === 'budget' || stop.kind === 'error' ? (stop.answer ?? null) : null,
    stopReason: stopReason(stop),
    rounds: spend.rounds,
    toolCalls: spend.toolCalls,
    usage: spend.usage,
    // A turn that made no model call cost nothing; one whose calls were recorded before calls were priced has no cost.
    ...(spend.cost || spend.rounds === 0 ? { cost: spend.cost ?? ZERO_COST } : {}),
    ...(costs.conversationCost ? { conversationCost: costs.conversationCost } : {}),
    durationMs: now - spend.startedAt,
    ...(Object.keys(over).length > 0 ? { overrun: over } : {}),
    ...(error ? { error } : {}),
    ...(unavailableServers.length > 0 ? { unavailableServers: [...unavailableServers] } : {}),
    ...((stop.kind === 'answered' || stop.kind === 'budget') && stop.output !== undefined
      ? { output: stop.output }
      : {}),
    ...(stop.kind === 'budget' && stop.budgetDenied ? { budgetDenied: stop.budgetDenied } : {}),
    ...(compaction &&
    (compaction.summaries > 0 || compaction.trimmed !== undefined || (compaction.providerEdits?.length ?? 0) > 0)
      ? {
          compaction: {
            summaries: compaction.summaries,
            ...(compaction.trimmed !== undefined ? { trimmed: compaction.trimmed } : {}),
            ...(compaction.providerEdits?.length ? { providerEdits: compaction.providerEdits } : {}),
          },
        }
      : {}),
  };
}

export function stopReason(stop: TurnStop): StopReason {
  switch (stop.kind) {
    case 'answered':
      return 'completed';
    case 'cancelled':
      return 'cancelled';
    case 'error':
      return `error:${stop.error.type}`;
    case 'budget':
      return `budget:${stop.limit}`;
  }
}
