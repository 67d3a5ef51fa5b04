/**
 * durable-agent's package root: what a backend needs to drive conversations. The client, the settings, results,
 * messages and stream events it speaks in, its errors, and the configuration and encryption keys it connects with.
 * It loads no worker code: the worker, the plugin and the MCP tools are `durable-agent/worker`, the HTTP bridge
 * `durable-agent/bridge`, the codec server `durable-agent/codec` (with the encryption's values: the codec, its data converters, keys and errors), the testing kit `durable-agent/testing`, the workflow
 * code `durable-agent/workflows`. test/exports.test.ts pins every list, test/entry-points.test.ts what this one loads.
 */
export * from './client/index.js';
export type { EncryptionKey } from './codec/keys.js';
export { loadConfig, ConfigError, type Config, type TemporalConfig } from './config/index.js';
export { loadTenants, parseTenants, type TenantsConfig, type TenantPolicy } from './config/tenants.js';
// The base of every error durable-agent throws on purpose: `instanceof DurableAgentError` catches them all.
export { DurableAgentError, FailureType } from './shared/errors.js';
