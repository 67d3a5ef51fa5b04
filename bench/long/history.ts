import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

// @temporalio/proto is CommonJS that Node's ESM loader cannot read named exports from: take the default export.
const { temporal } = proto;
const { EventType } = temporal.api.enums.v1;

/** One run of a long conversation, as history. */
export interface LongRunHistory {
  runId: string;
  bytes: number;
  events: number;
  /** Bytes of the run's start event: the carried state, for a run that continued from another. */
  startBytes: number;
  /** Summary calls (`summarizeTranscript`, compaction's activity). */
  compactions: number;
}

/** Every run of the conversation `workflowId`, first to latest, walking back from the latest along continue-as-new. */
export async function conversationRuns(client: Client, workflowId: string): Promise<LongRunHistory[]> {
  const runs: LongRunHistory[] = [];
  let runId: string | undefined;
  let handle = client.workflow.getHandle(workflowId);
  for (;;) {
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const started = events[0];
    runs.unshift({
      runId: runId ?? (await handle.describe()).runId,
      bytes: temporal.api.history.v1.History.encode(history).finish().length,
      events: events.length,
      startBytes: started ? temporal.api.history.v1.HistoryEvent.encode(started).finish().length : 0,
      compactions: events.filter(
        (event) =>
          event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
          event.activityTaskScheduledEventAttributes?.activityType?.name === 'summarizeTranscript',
      ).length,
    });
    runId = started?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
    if (!runId) return runs;
    handle = client.workflow.getHandle(workflowId, runId);
  }
}
