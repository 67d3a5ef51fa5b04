import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import proto, { type temporal } from '@temporalio/proto';

/**
 * How long a call interrupted by a SIGKILL waits before it runs again: from the kill to the start of its next attempt,
 * as Temporal recorded that start. Nothing tells Temporal that a worker died, so the next attempt starts once the
 * attempt's heartbeat timeout has passed and its retry's backoff with it.
 */

type Timestamp = temporal.api.history.v1.IHistoryEvent['eventTime'];
const State = proto.temporal.api.enums.v1.PendingActivityState;
const HEARTBEAT = proto.temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT;

function milliseconds(timestamp: Timestamp): number | undefined {
  if (!timestamp) return undefined;
  return Number(timestamp.seconds ?? 0) * 1000 + Math.floor((timestamp.nanos ?? 0) / 1e6);
}

/** The start of an attempt after the interrupted one, and what ended the attempt before it. */
export interface NextAttempt {
  attempt: number;
  /** When Temporal started it (ms since the epoch, the server's clock: the same machine's here). */
  startedAt: number;
  /** True when the attempt before it ended because its heartbeat timed out (the kill), not by an error. */
  afterHeartbeatTimeout: boolean;
  /** The worker that runs it (`<pid>@<host>`). */
  identity: string;
}

type Failure = temporal.api.failure.v1.IFailure | null | undefined;
const isHeartbeatTimeout = (failure: Failure): boolean => failure?.timeoutFailureInfo?.timeoutType === HEARTBEAT;

/**
 * The first attempt after `attempt` of the activity `activityId` to start: read from the pending activity while it runs,
 * and from its ActivityTaskStarted event once it has finished (Temporal writes that event, with the attempt's start
 * time, only when the attempt ends, and only for the last attempt). Polls every 200 ms; the times are Temporal's, so
 * the polling adds nothing to them. Undefined when the activity finished with no attempt after `attempt` (the worker
 * reported it before it died).
 */
export async function nextAttemptOf(
  handle: WorkflowHandle,
  activityId: string,
  attempt: number,
  timeoutMs = 120_000,
): Promise<NextAttempt | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const description = await handle.describe();
    const pending = description.raw.pendingActivities?.find((activity) => activity.activityId === activityId);
    const startedAt = milliseconds(pending?.lastStartedTime);
    const pendingAttempt = pending?.attempt ?? 1;
    if (pending && pending.state === State.PENDING_ACTIVITY_STATE_STARTED && pendingAttempt > attempt && startedAt) {
      return {
        attempt: pendingAttempt,
        startedAt,
        afterHeartbeatTimeout: isHeartbeatTimeout(pending.lastFailure),
        identity: pending.lastWorkerIdentity ?? '',
      };
    }
    if (!pending) {
      const recorded = startedEvent(await handle.fetchHistory(), activityId);
      if (recorded) return recorded.attempt > attempt ? recorded : undefined;
    }
    await sleep(200);
  }
  throw new Error(`attempt ${attempt + 1} of activity ${activityId} did not start within ${timeoutMs / 1000} s`);
}

function startedEvent(history: temporal.api.history.v1.IHistory, activityId: string): NextAttempt | undefined {
  let scheduledEventId: number | undefined;
  for (const event of history.events ?? []) {
    if (event.activityTaskScheduledEventAttributes?.activityId === activityId) scheduledEventId = Number(event.eventId);
    const started = event.activityTaskStartedEventAttributes;
    const startedAt = milliseconds(event.eventTime);
    if (started && Number(started.scheduledEventId) === scheduledEventId && startedAt) {
      return {
        attempt: started.attempt ?? 1,
        startedAt,
        afterHeartbeatTimeout: isHeartbeatTimeout(started.lastFailure),
        identity: started.identity ?? '',
      };
    }
  }
  return undefined;
}

/**
 * Seconds from `killedAt` until every activity of `running` (those with an attempt running at the kill) had started
 * its next attempt; undefined when none had to.
 */
export async function resumedAfter(
  handle: WorkflowHandle,
  killedAt: number,
  running: readonly { activityId: string; attempt: number }[],
): Promise<number | undefined> {
  const next = await Promise.all(
    running.map((activity) => nextAttemptOf(handle, activity.activityId, activity.attempt)),
  );
  const starts = next.flatMap((attempt) => (attempt ? [attempt.startedAt] : []));
  return starts.length === 0 ? undefined : (Math.max(...starts) - killedAt) / 1000;
}

/** The activities of a workflow with a started attempt, by id, with that attempt's number. */
export async function startedAttempts(handle: WorkflowHandle): Promise<Map<string, number>> {
  const description = await handle.describe();
  return new Map(
    (description.raw.pendingActivities ?? [])
      .filter((activity) => activity.state === State.PENDING_ACTIVITY_STATE_STARTED)
      .map((activity) => [activity.activityId ?? '', activity.attempt ?? 1]),
  );
}

/** The nearest-rank percentile `p` (0 to 100) of `values`: of 20 values, p50 is the 10th smallest, p99 the largest. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new Error('no values to take a percentile of');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
