import { Context } from '@temporalio/activity';
import {
  ActivityCancelledError,
  ActivityNotFoundError,
  ActivityPausedError,
  ActivityResetError,
} from '@temporalio/client';
import { CompleteAsyncError } from '@temporalio/common';

/**
 * The one heartbeat of an activity attempt. Every heartbeat replaces the details Temporal keeps for the call, and the
 * next attempt gets the last ones recorded (`info.heartbeatDetails`): the count of failed attempts (./attempts.ts) and
 * a tool call's "request not sent" record (../tools/call.ts) live there. So every heartbeat of an attempt, whoever sends it
 * (the activity, or ../outages/keep-finished.ts while a retry waits for an earlier attempt's result), goes through here and
 * carries the current details: the activity's own once it has set them, until then the earlier attempt's as recorded,
 * and the count always.
 */

/** The field of the heartbeat details that holds the count of failed attempts. */
export interface FailedAttemptsRecord {
  /** Attempts of this call that failed with an error so far. */
  failedAttempts?: number;
}

/** Heartbeats per heartbeat timeout: a third, so one lost or late heartbeat does not time the attempt out. */
const HEARTBEATS_PER_TIMEOUT = 3;
/** The shortest interval, whatever the timeout: a heartbeat costs a timer here (sdk-core throttles server writes). */
export const MIN_HEARTBEAT_INTERVAL_MS = 100;
/**
 * The longest interval, and the interval of an activity without a heartbeat timeout. A cancellation (an interrupt, the
 * turn's time limit) reaches an attempt only in the answer to a heartbeat, so this and the first heartbeat's delay
 * bound how long a model or MCP request runs on after the turn gave it up: 3 s in a call's first seconds, 2 s after.
 */
export const MAX_HEARTBEAT_INTERVAL_MS = 2_000;

/**
 * When the first heartbeat of a wait comes, as a share of the heartbeat timeout: half, so 3 s for the calls' 6 s.
 * Every recorded heartbeat is a server write and a billable action on Temporal Cloud, and most model and tool calls end
 * within a few seconds: a call shorter than this records none. The first heartbeat must reach the server within the
 * timeout, counted from when the server handed the attempt out, which a starved worker may start running seconds
 * later: half the timeout is left for that lag and a late timer (docs/capacity.md weighs 2 s, 3 s and 3.6 s). Later
 * heartbeats come every {@link heartbeatIntervalMs}.
 */
const FIRST_HEARTBEAT_SHARE = 0.5;

/** How long a wait of an activity with this heartbeat timeout runs before its first heartbeat. */
export function firstHeartbeatDelayMs(heartbeatTimeoutMs: number | undefined): number {
  const interval = heartbeatIntervalMs(heartbeatTimeoutMs);
  if (heartbeatTimeoutMs === undefined || !(heartbeatTimeoutMs > 0)) return interval;
  return Math.max(interval, Math.floor(heartbeatTimeoutMs * FIRST_HEARTBEAT_SHARE));
}

/** How often an activity with this heartbeat timeout heartbeats. */
export function heartbeatIntervalMs(heartbeatTimeoutMs: number | undefined): number {
  if (heartbeatTimeoutMs === undefined || !(heartbeatTimeoutMs > 0)) return MAX_HEARTBEAT_INTERVAL_MS;
  const third = Math.floor(heartbeatTimeoutMs / HEARTBEATS_PER_TIMEOUT);
  return Math.min(MAX_HEARTBEAT_INTERVAL_MS, Math.max(MIN_HEARTBEAT_INTERVAL_MS, third));
}

/** Attempts that failed with an error before this one, as the attempts before it recorded. */
export function failedAttemptsIn(details: unknown): number {
  const count = typeof details === 'object' && details !== null ? (details as FailedAttemptsRecord).failedAttempts : 0;
  return typeof count === 'number' && Number.isInteger(count) && count > 0 ? count : 0;
}

const heartbeats = new WeakMap<Context, AttemptHeartbeat>();

export class AttemptHeartbeat {
  /** Milliseconds between two heartbeats, from the attempt's heartbeat timeout. */
  readonly intervalMs: number;
  /** Milliseconds from the start of a wait to its first heartbeat. */
  readonly firstDelayMs: number;
  /** The details the activity set; undefined until it does (the earlier attempt's are carried on meanwhile). */
  private own: object | undefined;
  private failedAttempts: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private waiting = 0;
  /** When Temporal last confirmed that this attempt runs: its start, then the last {@link confirmRunning}. */
  private confirmedAt = Date.now();
  private readonly startedAt = this.confirmedAt;

  private constructor(private readonly context: Context) {
    this.intervalMs = heartbeatIntervalMs(context.info.heartbeatTimeoutMs);
    this.firstDelayMs = firstHeartbeatDelayMs(context.info.heartbeatTimeoutMs);
    this.failedAttempts = failedAttemptsIn(context.info.heartbeatDetails);
  }

  /** The heartbeat of the attempt running in `context`: made at its first use, the same one for the whole attempt. */
  static of(context: Context = Context.current()): AttemptHeartbeat {
    let heartbeat = heartbeats.get(context);
    if (heartbeat === undefined) {
      heartbeat = new AttemptHeartbeat(context);
      heartbeats.set(context, heartbeat);
    }
    return heartbeat;
  }

  /** What a heartbeat sends now. Until an attempt has failed and before the activity sets any, exactly what it set. */
  get details(): object | undefined {
    const base = this.own ?? carried(this.context.info.heartbeatDetails);
    if (this.failedAttempts === 0) return base;
    return { ...base, failedAttempts: this.failedAttempts } satisfies FailedAttemptsRecord;
  }

  /** Failed attempts of this call so far, this one included once it has counted itself. */
  get failedAttemptsSoFar(): number {
    return this.failedAttempts;
  }

  /** Set the activity's own details (they replace the earlier attempt's); the next heartbeat sends them. */
  set(details: object): void {
    this.own = details;
  }

  /** Heartbeat now, after setting `details` if given. */
  beat(details?: object): void {
    if (details !== undefined) this.own = details;
    this.context.heartbeat(this.details);
  }

  /** Count this attempt as failed with an error and record it at once (the worker sends it with the failure). */
  countFailure(): number {
    this.failedAttempts++;
    this.beat();
    return this.failedAttempts;
  }

  /**
   * Heartbeat until `promise` settles, so Temporal does not time the attempt out meanwhile: first after
   * {@link firstDelayMs}, not at once (most calls finish before it, and a heartbeat is a server write), then every
   * {@link intervalMs}. Overlapping waits share one timer.
   */
  async during<T>(promise: Promise<T>): Promise<T> {
    if (this.waiting++ === 0) this.startBeating();
    try {
      return await promise;
    } finally {
      if (--this.waiting === 0) this.stopBeating();
    }
  }

  private startBeating(): void {
    this.timer = setTimeout(() => {
      this.beat();
      this.timer = setInterval(() => this.beat(), this.intervalMs);
    }, this.firstDelayMs);
  }

  private stopBeating(): void {
    // One timer at a time, a timeout then an interval: clearTimeout and clearInterval clear either kind.
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * Before a step that must not run for an attempt that is over (a paid model request): make sure Temporal still
   * waits for this attempt. A heartbeat reports nothing back to the activity unless it is cancelled, and during an
   * outage it does not reach the server at all, which then times the attempt out and runs a retry; so once the first
   * heartbeat's delay has passed since the last confirmation, this asks the server itself, with a heartbeat through the worker's client.
   * Throws when the attempt is over: its cancellation when Temporal cancelled it, else `CompleteAsyncError`, which
   * ends the attempt without a report (Temporal has closed it, or will time it out). Without a client (a mock
   * environment) only the cancellation and the start-to-close timeout are checked.
   */
  async confirmRunning(): Promise<void> {
    const { context } = this;
    const { info } = context;
    throwIfCancelled(context);
    const now = Date.now();
    if (info.startToCloseTimeoutMs > 0 && now - this.startedAt >= info.startToCloseTimeoutMs) {
      throw attemptOver(context, 'its start-to-close timeout has passed');
    }
    // Within the first heartbeat's delay of the last confirmation, the attempt cannot have timed out.
    if (now - this.confirmedAt < this.firstDelayMs) return;
    let client: Context['client'];
    try {
      client = context.client;
    } catch {
      return;
    }
    try {
      await client.activity.heartbeat(info.taskToken, this.details);
      this.confirmedAt = Date.now();
      return;
    } catch (error) {
      throwIfCancelled(context);
      if (error instanceof ActivityNotFoundError) throw attemptOver(context, 'Temporal no longer has it (timed out)');
      if (
        error instanceof ActivityCancelledError ||
        error instanceof ActivityPausedError ||
        error instanceof ActivityResetError
      ) {
        throw await cancellation(context, this.intervalMs * HEARTBEATS_PER_TIMEOUT);
      }
      const heartbeatTimeoutMs = info.heartbeatTimeoutMs ?? 0;
      // Temporal did not answer: past the heartbeat timeout since it last confirmed, the attempt has timed out unless a
      // heartbeat of ours reached it, which nothing tells.
      if (heartbeatTimeoutMs > 0 && Date.now() - this.confirmedAt >= heartbeatTimeoutMs) {
        throw attemptOver(context, 'Temporal did not answer within its heartbeat timeout');
      }
    }
  }
}

/** The earlier attempt's details, to carry on as they are. */
function carried(details: unknown): object | undefined {
  return typeof details === 'object' && details !== null ? details : undefined;
}

function throwIfCancelled(context: Context): void {
  if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason ?? new Error('cancelled');
}

function attemptOver(context: Context, why: string): CompleteAsyncError {
  context.log.warn(`This attempt is over (${why}): not sending its request; Temporal runs the call again`, {
    attempt: context.info.attempt,
  });
  return new CompleteAsyncError();
}

/**
 * Temporal cancelled the attempt: wait for the worker to learn it too (its next heartbeat brings it), so the attempt
 * ends as cancelled, which is what the workflow asked for; if it does not come in time, end without a report.
 */
async function cancellation(context: Context, waitAtMostMs: number): Promise<unknown> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([context.cancelled, new Promise((resolve) => (timer = setTimeout(resolve, waitAtMostMs)))]);
  } catch (reason) {
    return reason;
  } finally {
    clearTimeout(timer);
  }
  return attemptOver(context, 'Temporal cancelled it');
}
