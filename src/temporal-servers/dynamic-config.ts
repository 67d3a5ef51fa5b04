/**
 * The dynamic config that durable-agent's own Temporal servers run with: `durable-agent dev` passes it as flags, and
 * docker-compose.yml sets the same values for both of its servers (test/compose.test.ts holds them to it).
 */
export const DURABLE_AGENT_DYNAMIC_CONFIG = {
  // The same switches @temporalio/testing passes, so `dev` and the tests run workflow updates alike.
  'frontend.enableUpdateWorkflowExecution': true,
  'frontend.enableUpdateWorkflowExecutionAsyncAccepted': true,
  // Off by default in the open-source server. On, the response to a workflow task's completion carries the
  // activities it scheduled for the same worker (up to three, while it has free slots), so each model and tool call
  // skips a trip through matching and a poll (docs/servers.md, "The settings durable-agent runs them with").
  'system.enableActivityEagerExecution': true,
  // Task Queue Fairness (docs/tenants.md): the matching service dispatches a backlog round-robin across fairness keys
  // (a conversation's tenant) in proportion to their weights, instead of first in, first out.
  'matching.enableFairness': true,
} as const satisfies Record<string, boolean>;

/**
 * What `createLocalEnvironment` adds to the settings `@temporalio/testing` already gives its dev server (the update
 * switches), so an agent's tests run their activities as `durable-agent dev` does.
 */
export const TEST_DEV_SERVER_DYNAMIC_CONFIG = {
  'system.enableActivityEagerExecution': DURABLE_AGENT_DYNAMIC_CONFIG['system.enableActivityEagerExecution'],
} as const satisfies Partial<typeof DURABLE_AGENT_DYNAMIC_CONFIG>;

/** `--dynamic-config-value key=value` flags for `temporal server start-dev`. */
export function dynamicConfigFlags(values: Record<string, boolean> = DURABLE_AGENT_DYNAMIC_CONFIG): string[] {
  return Object.entries(values).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${String(value)}`]);
}
