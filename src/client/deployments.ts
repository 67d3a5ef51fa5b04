import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { quoteQueryValue } from '../shared/visibility-query.js';
import { CONVERSATION_WORKFLOW_TYPE } from './conversation-runs.js';

/**
 * The Worker Deployments of a namespace as Worker Versioning sees them (docs/upgrading.md): each version's state and the
 * open conversations still pinned to it, and whether its workers can be shut down.
 */

/** Where a version stands: Temporal's Worker Deployment Version status, in lower case. */
export type DeploymentVersionStatus =
  'current' | 'ramping' | 'draining' | 'drained' | 'inactive' | 'created' | 'unknown';

export interface DeploymentVersionReport {
  deploymentName: string;
  buildId: string;
  status: DeploymentVersionStatus;
  /** Percentage of new runs sent to this version, when it is ramping. */
  rampPercentage?: number;
  /** Open conversation runs pinned to this version: they run their next workflow task on its workers, nowhere else. */
  openPinnedConversations: number;
  /** No open conversation is pinned to it and no new run goes to it: its workers can stop. */
  canShutDown: boolean;
  /** ISO time the version first polled. */
  createdAt?: string;
}

export interface DeploymentReport {
  deploymentName: string;
  versions: DeploymentVersionReport[];
}

const { WorkerDeploymentVersionStatus: Status } = proto.temporal.api.enums.v1;
const STATUS_NAMES: Record<number, DeploymentVersionStatus> = {
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT]: 'current',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING]: 'ramping',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING]: 'draining',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED]: 'drained',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE]: 'inactive',
  [Status.WORKER_DEPLOYMENT_VERSION_STATUS_CREATED]: 'created',
};

/**
 * A version's workers can stop once no open conversation is pinned to it and Temporal sends it no new runs: drained,
 * or never made current (inactive, created). A draining version may still have runs that visibility has not counted.
 */
export function canShutDown(status: DeploymentVersionStatus, openPinnedConversations: number): boolean {
  return openPinnedConversations === 0 && ['drained', 'inactive', 'created'].includes(status);
}

/** The visibility query of the open conversation runs pinned to a version. */
export function pinnedConversationsQuery(deploymentName: string, buildId: string): string {
  return [
    `WorkflowType = ${quoteQueryValue(CONVERSATION_WORKFLOW_TYPE)}`,
    `ExecutionStatus = 'Running'`,
    `TemporalWorkflowVersioningBehavior = 'Pinned'`,
    `TemporalWorkerDeploymentVersion = ${quoteQueryValue(`${deploymentName}:${buildId}`)}`,
  ].join(' AND ');
}

/** The names of the namespace's Worker Deployments. */
export async function listDeploymentNames(client: Client): Promise<string[]> {
  const names: string[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkerDeployments({
      namespace: client.options.namespace,
      pageSize: 100,
      nextPageToken,
    });
    names.push(...(page.workerDeployments ?? []).map((deployment) => deployment.name ?? '').filter(Boolean));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return names.sort();
}

/** One Worker Deployment's versions, newest first, with their open pinned conversations counted. */
export async function describeDeployment(client: Client, deploymentName: string): Promise<DeploymentReport> {
  const { workerDeploymentInfo: info } = await client.workflowService.describeWorkerDeployment({
    namespace: client.options.namespace,
    deploymentName,
  });
  const rampingBuildId = info?.routingConfig?.rampingDeploymentVersion?.buildId;
  const summaries = [...(info?.versionSummaries ?? [])].sort(
    (a, b) => Number(b.createTime?.seconds ?? 0) - Number(a.createTime?.seconds ?? 0),
  );
  const versions = await Promise.all(
    summaries.map(async (summary): Promise<DeploymentVersionReport> => {
      const buildId = summary.deploymentVersion?.buildId ?? '';
      const status = STATUS_NAMES[summary.status ?? 0] ?? 'unknown';
      const { count } = await client.workflow.count(pinnedConversationsQuery(deploymentName, buildId));
      const seconds = Number(summary.createTime?.seconds ?? 0);
      return {
        deploymentName,
        buildId,
        status,
        ...(status === 'ramping' && buildId === rampingBuildId
          ? { rampPercentage: info?.routingConfig?.rampingVersionPercentage ?? 0 }
          : {}),
        openPinnedConversations: count,
        canShutDown: canShutDown(status, count),
        ...(seconds > 0 ? { createdAt: new Date(seconds * 1000).toISOString() } : {}),
      };
    }),
  );
  return { deploymentName, versions };
}
