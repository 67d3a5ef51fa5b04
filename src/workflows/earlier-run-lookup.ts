import { log, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import type { EarlierRun } from './earlier-runs.js';

// Local: a visibility list and a describe or two, before the run answers anything; no task queue round trip. Retried
// for a minute; if it still fails, the run goes on as if it found nothing (and says so in the log).
const { findEarlierRun } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '10 seconds',
  scheduleToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds' },
});

/** The earlier runs of this run's workflow id (./earlier-runs.ts says why a run looks), or none when it cannot look. */
export async function lookForEarlierRun(
  workflowId: string,
  runId: string,
  conversationId: string,
): Promise<EarlierRun> {
  try {
    return await findEarlierRun({ workflowId, runId });
  } catch (error) {
    log.warn('could not look for earlier runs of this conversation; going on as if there were none', {
      conversationId,
      error: String(error),
    });
    return { found: false, unavailable: String(error) };
  }
}
