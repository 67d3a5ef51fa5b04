/**
 * How much the worker runs at once (docs/tenants.md): limits low enough that a backlog forms in Temporal, where Task
 * Queue Fairness shares it out between tenants, and not inside the worker, where it would be first come, first served.
 */

import { readInteger } from './index.js';

export const MAX_CONCURRENT_MODEL_CALLS_VARIABLE = 'DURABLE_AGENT_MAX_CONCURRENT_MODEL_CALLS';
export const MAX_CONCURRENT_TOOL_CALLS_VARIABLE = 'DURABLE_AGENT_MAX_CONCURRENT_TOOL_CALLS';
export const MAX_CONCURRENT_WORKFLOW_TASKS_VARIABLE = 'DURABLE_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS';

/** The worker's limits; each absent one is the Temporal SDK's default. */
export interface WorkerConcurrency {
  /** `DURABLE_AGENT_MAX_CONCURRENT_MODEL_CALLS`: model calls at once (default 100, the SDK's activity slots). */
  modelCalls?: number;
  /** `DURABLE_AGENT_MAX_CONCURRENT_TOOL_CALLS`: tool calls (and other activities) at once (default 100). */
  toolCalls?: number;
  /** `DURABLE_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS`: workflow tasks at once (default the SDK's, 40). */
  workflowTasks?: number;
}

/** The worker's limits from the environment; a value that is not a whole number from 1 up is a ConfigError. */
export function readWorkerConcurrency(env: Record<string, string | undefined> = process.env): WorkerConcurrency {
  const limit = (name: string) => {
    const value = readInteger(env, name, 0, 1, 100_000, 'a whole number from 1 to 100000');
    return value === 0 ? undefined : value;
  };
  const modelCalls = limit(MAX_CONCURRENT_MODEL_CALLS_VARIABLE);
  const toolCalls = limit(MAX_CONCURRENT_TOOL_CALLS_VARIABLE);
  const workflowTasks = limit(MAX_CONCURRENT_WORKFLOW_TASKS_VARIABLE);
  return {
    ...(modelCalls === undefined ? {} : { modelCalls }),
    ...(toolCalls === undefined ? {} : { toolCalls }),
    ...(workflowTasks === undefined ? {} : { workflowTasks }),
  };
}
