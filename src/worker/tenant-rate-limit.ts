import os from 'node:os';
import { isGrpcServiceError, type Connection } from '@temporalio/client';
// @temporalio/proto is CommonJS: Node's ESM loader offers its exports on the default import only.
import proto from '@temporalio/proto';
import { TENANT_CALLS_PER_SECOND_VARIABLE } from '../config/tenant-rate-limit.js';

const { TaskQueueType } = proto.temporal.api.enums.v1;

export interface TenantRateLimitOptions {
  /** The connection whose workflow service sets the task queue's config. */
  connection: Pick<Connection, 'workflowService'>;
  namespace: string;
  /** The worker's task queue: the limit is set on its activity tasks, where model and tool calls wait. */
  taskQueue: string;
  /** Each tenant's activity tasks per second, times its fairness weight. */
  callsPerSecond: number;
  /** Who set it, as the task queue's config reports it; default `durable-agent worker <pid>@<host>`. */
  identity?: string;
}

/** What happened: the limit is on the task queue, or the server refused it and said why. */
export type TenantRateLimitOutcome = { applied: true } | { applied: false; refusal: string };

/**
 * Sets Temporal's fairness-key rate limit on the task queue's activity tasks (`UpdateTaskQueueConfig`): each fairness
 * key, a tenant, is dispatched at most `callsPerSecond` activity tasks a second, times its weight. Temporal's limit is per
 * task queue and task queue type, so it counts a tenant's model calls and tool calls together. A refusal by the server
 * (one without the API, an API key without the permission) is returned, not thrown: the worker runs on without the
 * limit and says so. Other errors are thrown.
 */
export async function applyTenantRateLimit(options: TenantRateLimitOptions): Promise<TenantRateLimitOutcome> {
  const { connection, namespace, taskQueue, callsPerSecond } = options;
  try {
    await connection.workflowService.updateTaskQueueConfig({
      namespace,
      identity: options.identity ?? `durable-agent worker ${process.pid}@${os.hostname()}`,
      taskQueue,
      taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      updateFairnessKeyRateLimitDefault: {
        rateLimit: { requestsPerSecond: callsPerSecond },
        reason: `durable-agent: ${TENANT_CALLS_PER_SECOND_VARIABLE}=${callsPerSecond}`,
      },
    });
    return { applied: true };
  } catch (error) {
    if (!isGrpcServiceError(error)) throw error;
    return { applied: false, refusal: error.details || error.message };
  }
}

/** The line a worker logs for an outcome of {@link applyTenantRateLimit}. */
export function tenantRateLimitMessage(
  outcome: TenantRateLimitOutcome,
  options: Pick<TenantRateLimitOptions, 'taskQueue' | 'callsPerSecond'>,
): string {
  const setting = `${TENANT_CALLS_PER_SECOND_VARIABLE}=${options.callsPerSecond}`;
  if (outcome.applied) {
    return (
      `Worker: each tenant's model and tool calls on task queue ${options.taskQueue} are dispatched at most ` +
      `${options.callsPerSecond} per second, times its weight (${setting}).`
    );
  }
  return (
    `Worker: could not set ${setting} on task queue ${options.taskQueue}: the server refused it ` +
    `(${outcome.refusal}). Tenants' calls are not rate limited. It needs a server with Task Queue Fairness and its ` +
    'UpdateTaskQueueConfig API, and permission to call it; or set it yourself with ' +
    `\`temporal task-queue config set --task-queue ${options.taskQueue} --task-queue-type activity ` +
    `--fairness-key-rps-limit-default ${options.callsPerSecond}\`.`
  );
}
