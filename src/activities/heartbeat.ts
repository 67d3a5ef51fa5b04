import { Context } from '@temporalio/activity';

/**
 * The one heartbeat of an activity attempt. Every heartbeat replaces the details Temporal keeps for the call, and the
 * next attempt gets the last ones recorded (`info.heartbeatDetails`): the count of failed attempts (./attempts.ts) and
 * a tool call's "request not sent" record (./tools.ts) live there. So every heartbeat of an attempt, whoever sends it
 * (the activity, or ./keep-finished.ts while a retry waits for an earlier attempt's result), goes through here and
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
/** The longest interval, and the interval of an activity without a heartbeat timeout (cancellations come with it). */
export const MAX_HEARTBEAT_INTERVAL_MS = 10_000;

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
  /** The details the activity set; undefined until it does (the earlier attempt's are carried on meanwhile). */
  private own: object | undefined;
  private failedAttempts: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private waiting = 0;

  private constructor(private readonly context: Context) {
    this.intervalMs = heartbeatIntervalMs(context.info.heartbeatTimeoutMs);
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
   * Heartbeat every {@link intervalMs} until `promise` settles, so Temporal does not time the attempt out meanwhile.
   * The first heartbeat comes after an interval, not at once: most calls finish before it, and a heartbeat is a
   * server write. Overlapping waits share one timer.
   */
  async during<T>(promise: Promise<T>): Promise<T> {
    if (this.waiting++ === 0) this.timer = setInterval(() => this.beat(), this.intervalMs);
    try {
      return await promise;
    } finally {
      if (--this.waiting === 0) clearInterval(this.timer);
    }
  }
}

/** The earlier attempt's details, to carry on as they are. */
function carried(details: unknown): object | undefined {
  return typeof details === 'object' && details !== null ? details : undefined;
}
