import type { ActivityOptions } from '@temporalio/workflow';
import { FailureType } from '../shared/errors.js';

// The activity options of every model call: a turn's (./turn.ts) and a summary's (./compaction.ts).
//
// Each call sets `maximumAttempts`: its error attempts (counted by the activity) plus the attempts it may lose to
// workers that die or shut down (see attempts.ts).
//
// A worker that dies (SIGKILL, out of memory) is noticed only when its attempt's heartbeat timeout passes: the retry
// starts on another worker after that timeout plus the first retry interval (1 s), at most 7 s for the 6 s below. The
// activities heartbeat first after 3 s, then every 2 s (src/worker/activities/calls/heartbeat.ts), so the timeout
// waits for three missed heartbeats; an event loop stalled for longer than 4 to 6 s times a live attempt out
// (docs/reliability.md). A timeout here changes no command a workflow emits, only the attributes of calls scheduled
// from now on, so no patch.
export const MODEL_CALL_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '6 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    // A result Temporal refused as too large would be as large again (and a retry is a second paid call).
    nonRetryableErrorTypes: [FailureType.PayloadsTooLarge],
  },
};
