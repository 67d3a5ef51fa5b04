import type { Client } from '@temporalio/client';
// @temporalio/proto is CommonJS: Node's ESM loader offers its exports on the default import only.
import proto from '@temporalio/proto';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';

const EventType = proto.temporal.api.enums.v1.EventType;
type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/**
 * Where one turn's time went, in milliseconds, from the recorded history's event times: waits in the task queue
 * (scheduled to started) and runs in the worker (started to completed) of workflow tasks and of activity tasks, and
 * the rest (from `ask` to the run's first event, from its last to the answer at the client, local activities inside
 * workflow tasks being part of the workflow task's run).
 */
export interface TurnBreakdown {
  totalMs: number;
  workflowTasks: number;
  workflowTaskWaitMs: number;
  workflowTaskRunMs: number;
  activityTasks: number;
  activityWaitMs: number;
  activityRunMs: number;
  /** From `ask` to the run's first event (the client and the frontend starting it). */
  beforeStartMs: number;
  otherMs: number;
}

function millis(event: HistoryEvent): number {
  const time = event.eventTime;
  return Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
}

/** The breakdown of a conversation's first turn, asked at `askedAt` (epoch ms) and answered `totalMs` later. */
export async function turnBreakdown(
  client: Client,
  conversationId: string,
  askedAt: number,
  totalMs: number,
): Promise<TurnBreakdown> {
  const history = await client.workflow.getHandle(conversationWorkflowId(conversationId)).fetchHistory();
  const events = history.events ?? [];
  const byId = new Map(events.map((event) => [Number(event.eventId), event]));
  const breakdown: TurnBreakdown = {
    totalMs,
    workflowTasks: 0,
    workflowTaskWaitMs: 0,
    workflowTaskRunMs: 0,
    activityTasks: 0,
    activityWaitMs: 0,
    activityRunMs: 0,
    beforeStartMs: events[0] ? millis(events[0]) - askedAt : 0,
    otherMs: 0,
  };
  for (const event of events) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) {
      const scheduled = byId.get(Number(event.workflowTaskStartedEventAttributes?.scheduledEventId));
      breakdown.workflowTasks += 1;
      if (scheduled) breakdown.workflowTaskWaitMs += millis(event) - millis(scheduled);
    } else if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) {
      const started = byId.get(Number(event.workflowTaskCompletedEventAttributes?.startedEventId));
      if (started) breakdown.workflowTaskRunMs += millis(event) - millis(started);
    } else if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      const scheduled = byId.get(Number(event.activityTaskStartedEventAttributes?.scheduledEventId));
      breakdown.activityTasks += 1;
      if (scheduled) breakdown.activityWaitMs += millis(event) - millis(scheduled);
    } else if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const started = byId.get(Number(event.activityTaskCompletedEventAttributes?.startedEventId));
      if (started) breakdown.activityRunMs += millis(event) - millis(started);
    }
  }
  const measured =
    breakdown.workflowTaskWaitMs + breakdown.workflowTaskRunMs + breakdown.activityWaitMs + breakdown.activityRunMs;
  breakdown.otherMs = totalMs - measured - breakdown.beforeStartMs;
  return breakdown;
}

/** The medians of each figure over turns (each figure's own median). */
export function medianBreakdown(breakdowns: readonly TurnBreakdown[]): TurnBreakdown {
  const median = (pick: (breakdown: TurnBreakdown) => number) => {
    const sorted = breakdowns.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
  };
  return {
    totalMs: median((b) => b.totalMs),
    workflowTasks: median((b) => b.workflowTasks),
    workflowTaskWaitMs: median((b) => b.workflowTaskWaitMs),
    workflowTaskRunMs: median((b) => b.workflowTaskRunMs),
    activityTasks: median((b) => b.activityTasks),
    activityWaitMs: median((b) => b.activityWaitMs),
    activityRunMs: median((b) => b.activityRunMs),
    beforeStartMs: median((b) => b.beforeStartMs),
    otherMs: median((b) => b.otherMs),
  };
}
