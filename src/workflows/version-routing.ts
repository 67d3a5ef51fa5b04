/**
 * Worker Versioning, the workflow's side: whether a run pinned to one Worker Deployment Version should move (continue
 * as new onto the deployment's target) between turns. Temporal tells a pinned run that its target changed
 * (`workflowInfo().targetWorkerDeploymentVersionChanged`), but Temporal Server 1.31 also says so for every workflow
 * task that reaches the worker through its sticky queue, where the server knows no target: so the flag only says
 * "look", and the deployment's routing, read by a local activity, says whether to move.
 */

/** A Worker Deployment Version as plain JSON. */
export interface DeploymentVersionRef {
  deploymentName: string;
  buildId: string;
}

/** Input of the `readDeploymentRouting` activity. */
export interface ReadDeploymentRoutingInput {
  deploymentName: string;
}

/** Where a Worker Deployment sends new runs: its current version and the ramping one, when set. */
export interface DeploymentRouting {
  /** Absent when no version is current (new runs go to unversioned workers). */
  current?: DeploymentVersionRef;
  ramping?: DeploymentVersionRef;
}

/**
 * A pinned run moves when its version is neither current nor ramping: a ramp sends some new runs to the ramping version
 * and the rest to the current one, and a run on either stays where it is. A deployment with no current version
 * (routing back to unversioned workers) moves runs too.
 */
export function shouldMove(pinned: DeploymentVersionRef, routing: DeploymentRouting): boolean {
  const same = (other: DeploymentVersionRef | undefined) =>
    other !== undefined && other.deploymentName === pinned.deploymentName && other.buildId === pinned.buildId;
  return !same(routing.current) && !same(routing.ramping);
}
