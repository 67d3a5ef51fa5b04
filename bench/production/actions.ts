import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

// @temporalio/proto is CommonJS that Node's ESM loader cannot read named exports from: take the default export.
const { temporal } = proto;
const { EventType } = temporal.api.enums.v1;

/**
 * Temporal Cloud's billable actions found in a workflow's history, by Temporal's published rules (docs.temporal.io,
 * "Temporal Cloud Actions") as Temporal Server's own estimator applies them (`emitActionMetric` in
 * common/rpc/interceptor/telemetry.go of 1.31, the `action` metric of "Estimate Actions for migration"): a workflow
 * start (continue-as-new included), every activity attempt (retries count), every timer, signal, accepted or rejected
 * update, search-attribute or memo upsert, each workflow task's batch of markers (local activities, side effects,
 * patches) once, a child workflow twice. Heartbeats and queries leave nothing in history: the benchmark counts them
 * at the frontend (`RecordActivityTaskHeartbeat` requests that reached it, after the SDK's throttling) and adds them.
 * The server's `action` metric is shown beside as a cross-check.
 */
export interface HistoryActions {
  events: number;
  workflowStarts: number;
  activityAttempts: number;
  timers: number;
  signals: number;
  updates: number;
  childWorkflows: number;
  /** Search attributes and memo (`UpsertWorkflowSearchAttributes`, `ModifyWorkflowProperties`). */
  upserts: number;
  markers: number;
  /** Workflow tasks that recorded at least one marker: one action each. */
  markerBatches: number;
}

export const NO_ACTIONS: HistoryActions = {
  events: 0,
  workflowStarts: 0,
  activityAttempts: 0,
  timers: 0,
  signals: 0,
  updates: 0,
  childWorkflows: 0,
  upserts: 0,
  markers: 0,
  markerBatches: 0,
};

/** The billable actions of a history count (heartbeats and queries come from the server, not from here). */
export function billableInHistory(actions: HistoryActions): number {
  return (
    actions.workflowStarts +
    actions.activityAttempts +
    actions.timers +
    actions.signals +
    actions.updates +
    2 * actions.childWorkflows +
    actions.upserts +
    actions.markerBatches
  );
}

export function addActions(a: HistoryActions, b: HistoryActions): HistoryActions {
  return Object.fromEntries(
    Object.keys(NO_ACTIONS).map((key) => [key, a[key as keyof HistoryActions] + b[key as keyof HistoryActions]]),
  ) as unknown as HistoryActions;
}

/** Count one workflow's actions over all its runs (following continue-as-new). */
export async function countActions(client: Client, workflowId: string, runId: string): Promise<HistoryActions> {
  let total = NO_ACTIONS;
  let next: string | undefined = runId;
  for (let runs = 0; next !== undefined && runs < 1_000; runs++) {
    const current: string = next;
    const history = await client.workflow.getHandle(workflowId, current).fetchHistory();
    const events = history.events ?? [];
    const count = { ...NO_ACTIONS, events: events.length };
    const markerTasks = new Set<string>();
    next = undefined;
    for (const event of events) {
      switch (event.eventType) {
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
          count.workflowStarts++;
          break;
        case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
          // One event per activity, written when it closes, with the attempt that ran last: every attempt is billed.
          count.activityAttempts += Math.max(1, event.activityTaskStartedEventAttributes?.attempt ?? 1);
          break;
        case EventType.EVENT_TYPE_TIMER_STARTED:
          count.timers++;
          break;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        case EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
          count.signals++;
          break;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_REJECTED:
          count.updates++;
          break;
        case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
          count.childWorkflows++;
          break;
        case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
        case EventType.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
          count.upserts++;
          break;
        case EventType.EVENT_TYPE_MARKER_RECORDED:
          count.markers++;
          markerTasks.add(String(event.markerRecordedEventAttributes?.workflowTaskCompletedEventId ?? event.eventId));
          break;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
          // The new run's start is counted in its own history.
          next = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
          break;
      }
    }
    count.markerBatches = markerTasks.size;
    total = addActions(total, count);
  }
  return total;
}

/** Count many workflows, a few at a time. */
export async function countAllActions(
  client: Client,
  executions: { workflowId: string; runId: string }[],
): Promise<HistoryActions> {
  let total = NO_ACTIONS;
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < executions.length; index = next++) {
      const { workflowId, runId } = executions[index]!;
      const counted = await countActions(client, workflowId, runId);
      total = addActions(total, counted);
    }
  };
  await Promise.all(Array.from({ length: 8 }, lane));
  return total;
}
