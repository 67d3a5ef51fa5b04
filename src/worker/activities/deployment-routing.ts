import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type {
  DeploymentRouting,
  DeploymentVersionRef,
  ReadDeploymentRoutingInput,
} from '../../workflows/version-routing.js';

function versionRef(
  version: temporal.api.deployment.v1.IWorkerDeploymentVersion | null | undefined,
): DeploymentVersionRef | undefined {
  if (!version?.buildId || !version.deploymentName) return undefined;
  return { deploymentName: version.deploymentName, buildId: version.buildId };
}

/** The `readDeploymentRouting` activity (local, see src/workflows/version-routing.ts): a Worker Deployment's routing. */
export function createDeploymentRoutingActivities(client: Client) {
  return {
    async readDeploymentRouting({ deploymentName }: ReadDeploymentRoutingInput): Promise<DeploymentRouting> {
      const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({
        namespace: client.options.namespace,
        deploymentName,
      });
      const routing = workerDeploymentInfo?.routingConfig;
      const current = versionRef(routing?.currentDeploymentVersion);
      const ramping = versionRef(routing?.rampingDeploymentVersion);
      return { ...(current ? { current } : {}), ...(ramping ? { ramping } : {}) };
    },
  };
}
