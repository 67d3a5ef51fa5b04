export * from './shared/types.js';
export { FailureType } from './shared/errors.js';
export { loadConfig, ConfigError, type Config } from './config.js';
export * from './client.js';
export {
  createStreamingBridge,
  serveStreamingBridge,
  SubscriptionHub,
  type StreamingBridge,
  type StreamingBridgeOptions,
  type ServeBridgeOptions,
  type ServedBridge,
} from './streaming/index.js';
