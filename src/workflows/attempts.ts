/**
 * How many attempts a model or tool call gets. The settings `modelAttempts` and `toolAttempts` bound the attempts
 * that failed with an error (an HTTP 500, a dropped MCP connection). Temporal counts every attempt alike, also one
 * lost to the infrastructure: a worker that died (the attempt's heartbeat timed out) or shut down. So the activities
 * count their own error attempts (src/worker/activities/calls/attempts.ts) and turn the last one non-retryable, and Temporal's
 * `maximumAttempts` is higher by {@link LOST_ATTEMPTS_ALLOWED}, the separate cap on attempts lost that way.
 * Shared by the workflow (retry policies) and the activities (their budgets).
 */

/** Attempts of a model call that may fail with a model error (HTTP 408/409/429/5xx, a dropped stream, ...). */
export const DEFAULT_MODEL_ATTEMPTS = 5;
/** Attempts of a tool call that may fail with a transport error (the MCP server could not be reached ...). */
export const DEFAULT_TOOL_ATTEMPTS = 3;
/**
 * Attempts of one call that may be lost to the infrastructure (worker crash or shutdown) on top of the error attempts
 * before Temporal gives up on it: generous, since each one is a worker that died, not a sign that the call is bad.
 */
export const LOST_ATTEMPTS_ALLOWED = 10;

/** The error attempts a setting allows: at least 1, whole; the default when not set. */
export function errorAttemptsAllowed(setting: number | undefined, defaultAttempts: number): number {
  if (setting === undefined || !Number.isFinite(setting)) return defaultAttempts;
  return Math.max(1, Math.floor(setting));
}

/** Temporal's `maximumAttempts` for a call that allows `errorAttempts` error attempts. */
export function maximumAttempts(errorAttempts: number): number {
  return errorAttempts + LOST_ATTEMPTS_ALLOWED;
}
