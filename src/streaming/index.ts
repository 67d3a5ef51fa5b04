/**
 * Streaming: the model activity's text publisher, and the HTTP bridge that serves a conversation's events as
 * server-sent events (docs/streaming.md).
 */
export {
  createStreamingBridge,
  type StreamingBridge,
  type StreamingBridgeOptions,
  type BridgeAgentClient,
} from './bridge.js';
export { SubscriptionHub, type SubscriptionHubOptions, type EventSource, type Watcher } from './hub.js';
export {
  TextPublisher,
  DEFAULT_STREAM_INTERVAL_MS,
  MAX_STREAM_INTERVAL_MS,
  type StreamPublisher,
  type StreamTarget,
} from './text-publisher.js';
export { serveStreamingBridge, type ServedBridge, type ServeBridgeOptions } from './serve.js';
