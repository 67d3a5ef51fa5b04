/**
 * Streaming: the HTTP bridge that serves a conversation's events as server-sent events (docs/streaming.md). The
 * worker-side publisher of the model's text lives with the model activity (src/activities/model/text-publisher.ts).
 */
export {
  createStreamingBridge,
  type StreamingBridge,
  type StreamingBridgeOptions,
  type BridgeAgentClient,
} from './bridge.js';
export { SubscriptionHub, type SubscriptionHubOptions, type EventSource, type Watcher } from './hub.js';
export { serveStreamingBridge, type ServedBridge, type ServeBridgeOptions } from './serve.js';
export {
  createServeToken,
  ServeConfigError,
  type ServeTokenOptions,
  DEFAULT_SERVE_TOKEN_TTL,
  MIN_SERVE_SECRET_BYTES,
} from './serve-tokens.js';
export { ServeErrorType } from './http-errors.js';
