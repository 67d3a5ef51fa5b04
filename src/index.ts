/**
 * durable-agent's public API: the client (and the settings, results, messages and stream events it speaks in), the
 * worker and its MCP tools, the streaming bridge, configuration. Everything else is internal; the testing kit is
 * `durable-agent/testing`, the workflow code `durable-agent/workflows`. test/exports.test.ts pins this list.
 */
export * from './agent-client/index.js';
export {
  createAgentWorker,
  createOpenAIClient,
  runWorker,
  type AgentWorkerOptions,
  type RunWorkerOptions,
} from './worker.js';
export { McpPool, type McpPoolOptions } from './mcp/pool.js';
export { Redactor, type Secret } from './shared/redaction.js';
export { installWorkerRuntime, RedactingLogger } from './worker-logger.js';
export {
  readTelemetrySettings,
  runtimeTelemetryOptions,
  startTelemetry,
  type Telemetry,
  type TelemetrySettings,
} from './telemetry/index.js';
export { loadMcpConfig, McpConfigError, type McpConfig, type McpServerConfig } from './mcp/config.js';
export { McpAuthorizationRequiredError } from './mcp/errors.js';
export { FileTokenStore, type McpTokenStore, type StoredAuthorization } from './mcp/oauth/token-store.js';
export {
  createStreamingBridge,
  serveStreamingBridge,
  createServeToken,
  ServeConfigError,
  ServeErrorType,
  type ServeTokenOptions,
  type StreamingBridge,
  type StreamingBridgeOptions,
  type ServeBridgeOptions,
  type ServedBridge,
} from './bridge/index.js';
export {
  createCodecApp,
  EncryptionCodec,
  encryptionDataConverter,
  EncryptionKeyNotFoundError,
  workerDataConverter,
  MalformedEncryptedPayloadError,
  parseEncryptionKeys,
  PayloadDecryptionError,
  serveCodec,
  type CodecServerOptions,
  type EncryptionKey,
  type RunningCodecServer,
} from './codec/index.js';
export { loadConfig, ConfigError, type Config, type TemporalConfig } from './config.js';
export { FailureType } from './shared/errors.js';
