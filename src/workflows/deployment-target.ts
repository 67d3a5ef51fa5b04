import { log, patched, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import { shouldMove } from './version-routing.js';

/** The patch under which a conversation continues as new, between turns, onto a newly current worker version. */
export const UPGRADE_BETWEEN_TURNS = 'upgrade-between-turns';

// Local, short: if the deployment cannot be read, the run stays on its version and looks again after the next turn.
const { readDeploymentRouting } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '5 seconds',
  scheduleToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds' },
});

/**
 * Temporal says this pinned run's target version may have changed (./version-routing.ts says why only "may").
 * Synchronous on purpose: without versioning the flag is never set, and the turn loop awaits nothing extra.
 */
export function targetMayHaveChanged(): boolean {
  const { targetWorkerDeploymentVersionChanged, currentDeploymentVersion } = workflowInfo();
  return (
    targetWorkerDeploymentVersionChanged && currentDeploymentVersion !== undefined && patched(UPGRADE_BETWEEN_TURNS)
  );
}

/** Whether the deployment now routes new runs away from this run's version; `false` when it cannot be read. */
export async function targetChanged(conversationId: string): Promise<boolean> {
  const pinned = workflowInfo().currentDeploymentVersion!;
  try {
    return shouldMove(pinned, await readDeploymentRouting({ deploymentName: pinned.deploymentName }));
  } catch (error) {
    log.warn('could not read the worker deployment; staying on this version for now', {
      conversationId,
      error: String(error),
    });
    return false;
  }
}
