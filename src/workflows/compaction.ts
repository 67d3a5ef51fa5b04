import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  log,
  patched,
  proxyActivities,
} from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import { CHARS_PER_TOKEN, estimateTokens } from '../shared/context.js';
import {
  COMPACT_AT,
  COMPACT_TO,
  MAX_SUMMARIES_PER_CALL,
  planCompaction,
  summaryMessage,
  summaryTokenLimit,
  viewTokens,
  type CompactionPlan,
} from '../shared/compaction.js';
import { FailureType } from '../shared/errors.js';
import { learnedWindow, type RefusalLimits } from '../shared/model-windows.js';
import type {
  CompactionRecord,
  ModelCallResult,
  ProviderCompactionRequest,
  SummaryRequest,
  ToolDefinition,
} from '../shared/types.js';
import { ZERO_COST } from '../shared/types.js';
import { addUsage } from './budget.js';
import { addCost } from './cost-budget.js';
import { DEFAULT_MODEL_ATTEMPTS, errorAttemptsAllowed, maximumAttempts } from './attempts.js';
import { ContextWindow } from './context-window.js';
import { ledgersSummaries, summaryToLedger } from './ledger-writes.js';
import { MODEL_CALL_OPTIONS } from './model-call-options.js';
import { describeFailure } from './turn-failures.js';
import { activityPriority, report, type TurnState } from './turn-state.js';

export type { TurnCompaction } from './turn-state.js';

// A summary call is a model call.
const { summarizeTranscript } = proxyActivities<Activities>(MODEL_CALL_OPTIONS);

/**
 * The patch of compaction (docs/models.md#compaction). Asked only when a compaction is due or the model refused an
 * input as too long, so turns that never come near the window record no marker and replay as release 0.1.0 recorded
 * them; a refusal in a history recorded before the patch replays as the error it was.
 */
export const COMPACTION_PATCH = 'compaction';

/** The conversation's window, or the turn's own when it runs without one (a sub-agent's turn). */
export function windowOf(turn: TurnState): ContextWindow {
  turn.window ??= turn.context.contextWindow ?? new ContextWindow(turn.context.settings, undefined);
  return turn.window;
}

/** A turn's first call named its model and tools: what the conversation's later checks count with. */
export function noteTurnSetup(turn: TurnState, tools: readonly ToolDefinition[]): void {
  const window = windowOf(turn);
  window.model = turn.model;
  const chars = tools.reduce(
    (sum, tool) => sum + tool.name.length + tool.description.length + JSON.stringify(tool.inputSchema).length,
    0,
  );
  window.toolTokens = Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Estimated tokens of the next call's input: the model's view of the transcript and the tools it offers. */
function inputTokens(turn: TurnState): number {
  return viewTokens(turn.context.transcript.messages) + windowOf(turn).toolTokens;
}

/**
 * Whether the next model call's input passes {@link COMPACT_AT} of a known window (and, if so, the patch is on):
 * checked synchronously before each call, so a call that needs no compaction is scheduled as it always was.
 */
export function compactionDue(turn: TurnState): boolean {
  const window = windowOf(turn);
  if (!window.enabled || window.byProvider || turn.compaction.trimTo !== undefined) return false;
  const tokens = window.windowOf(turn.model);
  if (tokens === undefined || inputTokens(turn) <= tokens * COMPACT_AT) return false;
  return patched(COMPACTION_PATCH);
}

/**
 * What the next model call asks of the provider's own compaction (`settings.compaction: "provider"`): compact at
 * {@link COMPACT_AT} of the window when it is known, at the provider's default otherwise. `undefined` without it.
 */
export function providerCompaction(turn: TurnState): ProviderCompactionRequest | undefined {
  const window = windowOf(turn);
  if (!window.byProvider) return undefined;
  const tokens = window.windowOf(turn.model);
  return tokens === undefined ? {} : { threshold: Math.max(1, Math.floor(tokens * COMPACT_AT)) };
}

/** Summarize the older part of the transcript before the next call (the window is known: {@link compactionDue}). */
export async function compactBeforeCall(turn: TurnState): Promise<void> {
  const tokens = windowOf(turn).windowOf(turn.model);
  if (tokens !== undefined) await compact(turn, 'window', tokens);
}

/** A refused model call's failure, when it is a context-length refusal that compaction may answer. */
export function lengthRefusal(turn: TurnState, error: unknown): RefusalLimits | undefined {
  const cause = error instanceof ActivityFailure ? error.cause : undefined;
  if (!(cause instanceof ApplicationFailure) || cause.type !== FailureType.ModelContextLengthExceeded) return undefined;
  if (!windowOf(turn).enabled || !patched(COMPACTION_PATCH)) return undefined;
  const details = cause.details?.[0] as { refusal?: RefusalLimits } | undefined;
  return details?.refusal ?? {};
}

/**
 * After a context-length refusal, whatever the table said: learn the window from it and compact (or, when that
 * fails, trim harder). Returns whether the input changed, so that the call is worth making once more.
 */
export async function compactAfterRefusal(turn: TurnState, refusal: RefusalLimits): Promise<boolean> {
  const window = windowOf(turn);
  const sent = inputTokens(turn);
  const trimmedTo = turn.compaction.trimTo;
  window.learn(turn.model, learnedWindow(refusal, trimmedTo === undefined ? sent : trimmedTo + window.toolTokens));
  const tokens = window.windowOf(turn.model) as number;
  if (trimmedTo !== undefined) {
    const harder = trimLimit(turn, tokens * COMPACT_TO);
    turn.compaction.trimTo = Math.min(trimmedTo, harder);
    return turn.compaction.trimTo < trimmedTo;
  }
  const before = turn.compaction.summaries;
  await compact(turn, 'refusal', tokens);
  return turn.compaction.summaries > before || turn.compaction.trimTo !== undefined;
}

/** Summaries until the input is down to {@link COMPACT_TO} of the window, nothing older is left, or one fails. */
async function compact(turn: TurnState, reason: CompactionRecord['reason'], window: number): Promise<void> {
  for (let made = 0; made < MAX_SUMMARIES_PER_CALL; made++) {
    const { transcript } = turn.context;
    const plan = planCompaction(transcript.messages, { window, toolTokens: windowOf(turn).toolTokens });
    if (plan === undefined) return;
    const failed = await summarize(turn, plan, reason, window);
    if (failed !== undefined) {
      turn.compaction.trimTo = trimLimit(turn, window * (reason === 'refusal' ? COMPACT_TO : COMPACT_AT));
      turn.compaction.trimmed =
        `The summary of the older turns failed (${failed}), so they were left out of the model's input instead ` +
        '(they stay in the transcript); the next turn tries to summarize them again.';
      log.warn('compaction failed; trimming instead', { turn: turn.context.turn, reason: failed });
      return;
    }
    if (inputTokens(turn) <= window * COMPACT_TO) return;
  }
}

/** The input limit for trimming, in estimated tokens of messages (the tools take their part of the window). */
function trimLimit(turn: TurnState, tokens: number): number {
  return Math.max(1, Math.floor(tokens - windowOf(turn).toolTokens));
}

/** One summary call; its summary is appended to the transcript. Returns why it failed, or `undefined`. */
async function summarize(
  turn: TurnState,
  plan: CompactionPlan,
  reason: CompactionRecord['reason'],
  window: number,
): Promise<string | undefined> {
  const { context } = turn;
  const { transcript } = context;
  const offset = windowOf(turn).offset;
  const index = ++turn.compaction.calls;
  const record: CompactionRecord = {
    from: offset + plan.from,
    to: offset + plan.to,
    verbatim: plan.verbatim,
    reason,
    tokensBefore: inputTokens(turn),
  };
  const request: SummaryRequest = {
    index,
    from: plan.from,
    to: plan.to,
    ...(plan.previous !== undefined ? { previous: plan.previous } : {}),
    record,
    maxInputTokens: Math.floor(window * 0.6),
  };
  const { prefix, newMessages } = transcript.nextModelInput();
  const attempts = errorAttemptsAllowed(context.settings.modelAttempts, DEFAULT_MODEL_ATTEMPTS);
  report(turn, `summarizing messages ${record.from}-${record.to - 1}`);
  let result: ModelCallResult;
  try {
    result = await summarizeTranscript.executeWithOptions(
      {
        summary:
          `turn ${context.turn} · model ${turn.model ?? 'default'} · summarizes messages ` +
          `${record.from}-${record.to - 1} (${reason})`,
        retry: { maximumAttempts: maximumAttempts(attempts) },
        ...activityPriority(turn),
      },
      [
        {
          workflowId: context.workflowId,
          runId: context.runId,
          turn: context.turn,
          round: turn.round + 1,
          prefix,
          newMessages,
          toolsDigest: undefined,
          model: turn.model,
          temperature: undefined,
          maxCompletionTokens: summaryTokenLimit(window),
          maxInputTokens: undefined,
          toolChoice: 'none',
          instruction: undefined,
          ...(turn.costLimited ? { costBudget: true as const } : {}),
          ...(attempts !== DEFAULT_MODEL_ATTEMPTS ? { modelAttempts: attempts } : {}),
          summarize: request,
        },
      ],
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    const failure = describeFailure(error);
    return `${failure.type}: ${failure.message}`;
  }
  recordSpend(turn, result);
  // Before the next call, as a round's: the conversation's entries reach the tenant's ledger in order.
  if (ledgersSummaries(turn)) await summaryToLedger(turn, index, result);
  const summary = result.message.content ?? '';
  if (summary.trim() === '') return 'the summary came back empty';
  if (result.finishReason === 'content_filter') return 'the summary was refused by the content filter';
  const tokens = estimateTokens({ role: 'system', content: summary });
  if (tokens >= plan.replacedTokens) {
    return `the summary (about ${tokens} tokens) came back longer than what it replaces (about ${plan.replacedTokens})`;
  }
  transcript.append(summaryMessage(summary, record));
  // The worker that made the summary cached the transcript and the summary message.
  transcript.markShared(transcript.length);
  turn.compaction.summaries++;
  return undefined;
}

/** A summary call is in the turn's budget and cost: its tokens and its price, not a round. */
function recordSpend(turn: TurnState, result: ModelCallResult): void {
  turn.spend.usage = addUsage(turn.spend.usage, result.usage);
  if (result.cost !== undefined) {
    turn.spend.cost = addCost(turn.spend.cost ?? ZERO_COST, result.cost);
    turn.context.costs.record(result.cost);
  }
}
