import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';

/**
 * Workflow interceptors of the `durable-agent-no-heartbeat-timeout` experiment (bundled into its workflow code only):
 * every activity is scheduled without a heartbeat timeout, so the difference to `durable-agent` in the same run is
 * what the 6 s heartbeat timeout of model and tool calls costs per step (docs/reliability.md, "Recovery after a worker
 * dies"): a timer task per attempt on the server, and the worker's bookkeeping for it. Measurement only: without the
 * timeout a call whose worker died waits out its start-to-close timeout.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      scheduleActivity: (input, next) => next({ ...input, options: { ...input.options, heartbeatTimeout: undefined } }),
    },
  ],
});
