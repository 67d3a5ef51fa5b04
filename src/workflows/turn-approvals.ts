import { CancellationScope, condition, isCancellation, sleep } from '@temporalio/workflow';
import type { JsonObject, ToolCall, ToolDefinition, ToolMessage } from '../shared/types.js';
import type { ApprovalDecision } from '../shared/approval-messages.js';
import { approvalTimeout } from '../shared/approval-policy.js';
import { timeLeft, type TurnBudget, type TurnSpend } from './budget.js';
import { toolMessage } from './tool-calls.js';
import type { TurnContext } from './turn-context.js';

/**
 * A turn's waits for a person (docs/approvals.md): the call is recorded as pending and the turn waits with
 * `condition()`, with no activity and no polling (a durable timer only when the conversation sets a timeout), while its
 * time limit is paused. Every `Date.now()` here reads Temporal's workflow time (the sandbox replaces the clock), so
 * the paused time and the timeouts replay the same.
 */

/** What the time limit changes on the turn when it fires. */
interface Timed {
  readonly budget: TurnBudget;
  readonly spend: TurnSpend;
  timedOut: boolean;
}

/**
 * The turn's time limit: one timer per turn (not per round) keeps history small. When it fires, whatever runs in
 * `work` is cancelled and `timedOut` tells why. While a call waits for a person it is paused (its timer cancelled,
 * the wait added to `spend.waitedMs`) and restarted for the time left afterwards, so a turn that never waits has the
 * one timer it always had.
 */
export class TimeLimit {
  readonly work = new CancellationScope();
  private readonly parent = CancellationScope.current();
  private timer: CancellationScope | undefined;
  private waits = 0;
  private pausedAt = 0;
  private stopped = false;

  constructor(private readonly turn: Timed) {
    this.start(turn.budget.maxDurationMs);
  }

  /** A call starts waiting for a person: the first stops the clock. */
  pause(): void {
    if (this.waits++ > 0 || this.stopped) return;
    this.timer?.cancel();
    this.timer = undefined;
    this.pausedAt = Date.now();
  }

  /** A call stopped waiting: the last restarts the clock for the time left. */
  resume(): void {
    if (--this.waits > 0 || this.stopped) return;
    const { spend, budget } = this.turn;
    spend.waitedMs = (spend.waitedMs ?? 0) + (Date.now() - this.pausedAt);
    const left = timeLeft(spend, budget, Date.now());
    if (left > 0) this.start(left);
    else this.fire();
  }

  /** The limit fired: what the work was doing was cancelled by the budget. */
  get timedOut(): boolean {
    return this.turn.timedOut;
  }

  /** The turn's work is done. */
  cancel(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  private start(ms: number): void {
    const timer = new CancellationScope({ parent: this.parent, cancellable: true });
    this.timer = timer;
    timer
      .run(() => sleep(ms))
      .then(
        () => this.fire(),
        () => undefined,
      );
  }

  private fire(): void {
    this.turn.timedOut = true;
    this.work.cancel();
  }
}

/** How a call that needed approval came out: run it (with these arguments), or answer it with a message. */
export type ApprovalOutcome =
  | { kind: 'run'; arguments: JsonObject; decision: ApprovalDecision }
  | { kind: 'message'; message: ToolMessage; decision: ApprovalDecision };

/**
 * Record the call as pending and wait for its decision: an `approve` or `deny` update, the conversation's timeout
 * (`approval.timeoutMs`, decided by `approval.onTimeout`), or the turn's cancellation (an interrupt).
 */
export async function awaitApproval(
  context: TurnContext,
  limit: TimeLimit,
  {
    call,
    tool,
    arguments: given,
    reason,
  }: { call: ToolCall; tool: ToolDefinition; arguments: JsonObject; reason: string },
): Promise<ApprovalOutcome> {
  const { approvals, settings } = context;
  const timeoutMs = approvalTimeout(settings.approval);
  // Workflow time (the sandbox's clock, from history): the request's time and its deadline replay the same.
  const now = Date.now();
  approvals.request(
    {
      callId: call.id,
      turn: context.turn,
      tool: call.name,
      server: tool.server,
      arguments: given,
      reason,
      requestedAt: new Date(now).toISOString(),
      ...(timeoutMs !== undefined ? { expiresAt: new Date(now + timeoutMs).toISOString() } : {}),
    },
    tool,
  );
  limit.pause();
  try {
    const decided = () => approvals.isDecided(call.id);
    // `condition(fn, undefined)` waits with no timer but resolves to `undefined`, which would read as timed out: pass a
    // timeout only when one is set.
    if (timeoutMs === undefined) await condition(decided);
    else if (!(await condition(decided, timeoutMs))) onTimeout(context, call, timeoutMs);
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // A decision that came in the same activation as the cancellation does not run either: the turn is over.
    const [by, reason] = limit.timedOut
      ? ['time-budget', "the turn's time budget ran out"]
      : ['interrupt', 'the user interrupted the turn'];
    if (!approvals.isDecided(call.id)) approvals.decide(call.id, { decision: 'denied', by, reason });
    const decision = approvals.take(call.id)!;
    const message = limit.timedOut ? APPROVAL_RESULTS.outOfTime(call) : APPROVAL_RESULTS.interrupted(call);
    return { kind: 'message', message, decision };
  } finally {
    limit.resume();
  }
  const decision = approvals.take(call.id)!;
  if (decision.decision === 'approved') return { kind: 'run', arguments: decision.arguments ?? given, decision };
  const message =
    decision.by === 'timeout' ? APPROVAL_RESULTS.timedOut(call, timeoutMs!) : APPROVAL_RESULTS.denied(call, decision);
  return { kind: 'message', message, decision };
}

function onTimeout(context: TurnContext, call: ToolCall, timeoutMs: number): void {
  if (context.approvals.isDecided(call.id)) return;
  // `deny` unless the conversation says `approve` (the default, and what any other value means).
  const approve = context.settings.approval?.onTimeout === 'approve';
  context.approvals.decide(call.id, {
    decision: approve ? 'approved' : 'denied',
    by: 'timeout',
    ...(approve ? {} : { reason: `nobody decided within ${formatDuration(timeoutMs)}` }),
  });
}

/** The note a call run with a person's arguments gets before its result: the model's own stay in its tool call. */
export function editedNote(edited: JsonObject): string {
  return `[A person edited the arguments before approving this call; it ran with ${JSON.stringify(edited)}.]\n`;
}

export const APPROVAL_RESULTS = {
  denied: (call: ToolCall, decision: ApprovalDecision) =>
    toolMessage(
      call,
      'denied',
      `A person denied this call to ${call.name}, so it did not run. Their reason: ${decision.reason ?? '(none given)'}`,
    ),
  timedOut: (call: ToolCall, timeoutMs: number) =>
    toolMessage(
      call,
      'denied',
      `Nobody approved this call to ${call.name} within ${formatDuration(timeoutMs)}, so it did not run.`,
    ),
  interrupted: (call: ToolCall) =>
    toolMessage(
      call,
      'cancelled',
      'The user interrupted the turn while this call waited for approval; it did not run.',
    ),
  outOfTime: (call: ToolCall) =>
    toolMessage(call, 'budget_exhausted', "Not run: the turn's time budget is used up. Answer with what you have."),
} as const;

/** `90000` → `1.5 minutes`, for the model and people. */
export function formatDuration(ms: number): string {
  const units: [string, number][] = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1_000],
  ];
  for (const [unit, size] of units) {
    if (ms >= size) {
      const value = Math.round((ms / size) * 10) / 10;
      return `${value} ${unit}${value === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}
