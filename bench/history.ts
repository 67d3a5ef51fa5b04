import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

// @temporalio/proto is CommonJS that Node's ESM loader cannot read named exports from: take the default export.
const { temporal } = proto;

/** What one run of a workflow left in history. */
export interface RunHistory {
  runId: string;
  events: number;
  /** The history encoded as the server sends it (protobuf), in bytes. */
  bytes: number;
  largestEventBytes: number;
  activities: number;
}

/** A workflow's history over all its runs (continue-as-new), as figures. */
export interface ConversationHistory {
  workflowId: string;
  runs: RunHistory[];
  events: number;
  bytes: number;
  activities: number;
}

const { EventType } = temporal.api.enums.v1;

/**
 * Measure the history of a workflow from `runId` on, following continue-as-new. Any SDK's workflow can be measured
 * here: the history is the server's, whichever worker wrote it.
 */
export async function measureHistory(client: Client, workflowId: string, runId: string): Promise<ConversationHistory> {
  const runs: RunHistory[] = [];
  let next: string | undefined = runId;
  while (next !== undefined) {
    const current: string = next;
    const history = await client.workflow.getHandle(workflowId, current).fetchHistory();
    const events = history.events ?? [];
    const sizes = events.map((event) => temporal.api.history.v1.HistoryEvent.encode(event).finish().length);
    runs.push({
      runId: current,
      events: events.length,
      bytes: temporal.api.history.v1.History.encode(history).finish().length,
      largestEventBytes: Math.max(0, ...sizes),
      activities: events.filter((event) => event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED).length,
    });
    const last = events.at(-1);
    next =
      last?.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
        ? (last.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined)
        : undefined;
  }
  return {
    workflowId,
    runs,
    events: sum(runs.map((run) => run.events)),
    bytes: sum(runs.map((run) => run.bytes)),
    activities: sum(runs.map((run) => run.activities)),
  };
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
