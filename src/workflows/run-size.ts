import { patched, workflowInfo } from '@temporalio/workflow';

// A run's share of Temporal's limits on one history (50 MB and 51,200 events, the server's and Temporal Cloud's
// defaults). Temporal suggests continuing as new only at 4 MB or 4,096 events (8% of each), and a conversation whose
// turns record a megabyte each (twenty 50 KB tool results) passes that by most of a turn. A run that rolls over past
// these ends at most one turn and the carried state (up to MAX_CARRIED_TRANSCRIPT_CHARS of transcript) beyond them:
// under 5% of both for turns of up to a megabyte, as docs/benchmarks.md ("Long conversations") measures.

/** History bytes after which a run continues as new between turns: 2% of 50 MB. */
export const RUN_HISTORY_BYTES = 1_000_000;
/** History events after which a run continues as new between turns: about 4% of 51,200. */
export const RUN_HISTORY_EVENTS = 2_000;

/** The patch after which a run rolls over past its share (release 0.1.0's runs went on until Temporal suggested it). */
export const RUN_SIZE_PATCH = 'run-history-share';

/**
 * Whether this run's history passed its share, read between turns (the marker is recorded only then, so the runs of
 * earlier releases that never passed it replay as they were).
 */
export function runHistoryFull(): boolean {
  const { historySize, historyLength } = workflowInfo();
  return (historySize > RUN_HISTORY_BYTES || historyLength > RUN_HISTORY_EVENTS) && patched(RUN_SIZE_PATCH);
}
