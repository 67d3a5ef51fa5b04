/**
 * durable-agent's package root: what a backend needs to drive conversations. The client, the settings, results,
 * messages and stream events it speaks in, its errors, and the configuration and encryption keys it connects with.
 * It loads no worker code: the worker, the plugin and the MCP tools are `durable-agent/worker`, the HTTP bridge
 * `durable-agent/bridge`, the codec server `durable-agent/codec`, the testing kit `durable-agent/testing`, the workflow
 * code `durable-agent/workflows`. test/exports.test.ts pins every list, test/entry-points.test.ts what this one loads.
 */
export * from './agent-client/index.js';
export { encryptionDataConverter } from './codec/data-converter.js';
export { EncryptionCodec } from './codec/encryption-codec.js';
export { EncryptionKeyNotFoundError, MalformedEncryptedPayloadError, PayloadDecryptionError } from './codec/errors.js';
export { parseEncryptionKeys, type EncryptionKey } from './codec/keys.js';
export { loadConfig, ConfigError, type Config, type TemporalConfig } from './config.js';
export { FailureType } from './shared/errors.js';
