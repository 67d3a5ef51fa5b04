/**
 * durable-agent/worker: what runs durable-agent's workflows and activities. The plugin for an application's own
 * worker, a worker of its own, the MCP connection pool and its configuration, and the worker's redaction of secrets.
 */
export {
  durableAgentPlugin,
  DurableAgentPlugin,
  DuplicateTemporalSdkError,
  type DurableAgentPluginOptions,
} from './plugin/index.js';
export {
  createAgentWorker,
  createAnthropicClient,
  createOpenAIClient,
  runWorker,
  type AgentWorkerOptions,
  type RunWorkerOptions,
} from './agent-worker.js';
export { applyTenantRateLimit, type TenantRateLimitOptions, type TenantRateLimitOutcome } from './tenant-rate-limit.js';
export { McpPool, type McpPoolOptions } from './mcp/pool.js';
export { loadMcpConfig, McpConfigError, type McpConfig, type McpServerConfig } from './mcp/config.js';
// What `McpPool.callTool` throws, so that a caller can tell a server's answer from a failure to reach it.
export {
  McpAuthorizationRequiredError,
  McpProtocolError,
  McpToolNotConfiguredError,
  McpTransportError,
} from './mcp/errors.js';
export { FileTokenStore, type McpTokenStore, type StoredAuthorization } from './mcp/oauth/token-store.js';
export { PriceTable, loadPriceTable } from './pricing/price-table.js';
export * from './tools/index.js';
export type { ModelPrices } from './pricing/price-overrides.js';
export { Redactor, type Secret } from '../shared/redaction.js';
// The base of every error durable-agent throws on purpose, as in the package root.
export { DurableAgentError } from '../shared/errors.js';
export { installWorkerRuntime, RedactingLogger } from './logger.js';
export {
  readTelemetrySettings,
  runtimeTelemetryOptions,
  startTelemetry,
  type Telemetry,
  type TelemetrySettings,
} from './telemetry/index.js';
