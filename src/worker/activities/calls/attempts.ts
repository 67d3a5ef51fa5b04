import { Context, type Info } from '@temporalio/activity';
import { ApplicationFailure, CompleteAsyncError, ensureApplicationFailure } from '@temporalio/common';
import { AttemptHeartbeat, failedAttemptsIn } from './heartbeat.js';

/**
 * The activities count their own failed attempts, because Temporal's attempt number counts every attempt alike, also
 * one lost to a worker that died (its heartbeat timed out) or shut down, and `modelAttempts` / `toolAttempts` are
 * meant for errors of the call (src/workflows/attempts.ts). An attempt that fails with an error records the count in
 * its heartbeat details as it fails (the worker sends an attempt's last heartbeat with its failure, and Temporal hands
 * the last recorded details to the next attempt as `info.heartbeatDetails`); once the count reaches the budget, the
 * failure is thrown non-retryable. An attempt lost to the infrastructure records nothing, so it is not counted. Every
 * heartbeat of an attempt carries the count on (./heartbeat.ts), since a heartbeat replaces the details.
 */

export type { FailedAttemptsRecord } from './heartbeat.js';

/** Attempts that failed with an error before this one, as the attempts before it recorded. */
export function failedAttemptsBefore(info: Pick<Info, 'heartbeatDetails'>): number {
  return failedAttemptsIn(info.heartbeatDetails);
}

/**
 * Record that this attempt failed with `error` (in its last heartbeat, with the attempt's current details) and return
 * what to throw: `error` itself while fewer than `allowed` attempts have failed, then the same failure made
 * non-retryable. A cancellation (an interrupt, the turn's time limit, the worker shutting down) is not a failure of the
 * call: it is neither counted nor changed, and nor is a failure that is non-retryable already, nor an attempt that
 * ends without a report (`CompleteAsyncError`: Temporal has closed it, or its result is delivered later).
 */
export function failedAttempt(context: Context, allowed: number, error: unknown): unknown {
  if (context.cancellationSignal.aborted) return error;
  if (error instanceof CompleteAsyncError) return error;
  if (error instanceof ApplicationFailure && error.nonRetryable) return error;
  const failedAttempts = AttemptHeartbeat.of(context).countFailure();
  if (failedAttempts < allowed) return error;
  const failure = ensureApplicationFailure(error);
  return ApplicationFailure.create({
    type: failure.type ?? undefined,
    message: failure.message,
    details: failure.details ?? undefined,
    nonRetryable: true,
    cause: failure.cause,
    category: failure.category ?? undefined,
  });
}

/** Run one attempt of an activity, counting it when it fails with an error (see {@link failedAttempt}). */
export async function countingFailedAttempts<T>(allowed: number, attempt: () => Promise<T>): Promise<T> {
  try {
    return await attempt();
  } catch (error) {
    throw failedAttempt(Context.current(), allowed, error);
  }
}
