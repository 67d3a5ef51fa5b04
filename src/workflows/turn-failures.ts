import { ActivityFailure, ApplicationFailure, isCancellation, log, TimeoutFailure } from '@temporalio/workflow';
import { errorMessage, FailureType } from '../shared/errors.js';
import type { ToolCall, ToolDefinition, ToolMessage } from '../shared/types.js';
import { failedCallMayHaveRun, SYNTHETIC_RESULTS } from './tool-calls.js';
import type { TurnError } from './turn-result.js';

/**
 * The message the model gets for a tool call whose activity did not return a result: "unavailable" only when the call
 * cannot have run or is safe to repeat, since that message invites the model to try again later.
 */
export function toolFailureMessage(
  timedOut: boolean,
  call: ToolCall,
  tool: ToolDefinition,
  error: unknown,
  lastAttempt: number,
): ToolMessage {
  if (isCancellation(error)) {
    return timedOut ? SYNTHETIC_RESULTS.timeBudgetCancelled(call) : SYNTHETIC_RESULTS.cancelled(call);
  }
  const failure = logRefusedPayload(describeFailure(error, 'ToolTimeout'), `tool ${call.name}`);
  if (failure.type === FailureType.PayloadsTooLarge) return SYNTHETIC_RESULTS.resultTooLarge(call, failure.message);
  return failedCallMayHaveRun(error, tool.annotations, lastAttempt)
    ? SYNTHETIC_RESULTS.outcomeUnknown(call, `no attempt returned a result; the last: ${failure.message}`)
    : SYNTHETIC_RESULTS.unavailable(call, failure.message);
}

/**
 * Logs an activity result that Temporal refused as too large (durable-agent bounds its results, so this means a
 * namespace whose payload limit is lower than those bounds; see src/shared/payload-limits.ts).
 */
export function logRefusedPayload(failure: TurnError, activity: string): TurnError {
  if (failure.type === FailureType.PayloadsTooLarge) {
    log.warn(`Temporal refused the result of the ${activity} as too large for a payload`, { error: failure.message });
  }
  return failure;
}

/** The failure type and message of a failed activity, for the turn result or a synthetic tool message. */
export function describeFailure(error: unknown, timeoutType: string = FailureType.ModelTimeout): TurnError {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    return { type: cause.type ?? 'ApplicationFailure', message: cause.message };
  }
  if (cause instanceof TimeoutFailure) {
    // Attempts lost this way are not counted against modelAttempts/toolAttempts, so the last one is not the only one.
    return { type: timeoutType, message: "timed out (the activity's last attempt reached its timeout)" };
  }
  return { type: 'Unknown', message: errorMessage(cause) };
}
