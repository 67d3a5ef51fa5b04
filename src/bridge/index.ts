/** durable-agent/bridge: the HTTP bridge that serves conversations to browsers (docs/streaming.md). */
export { createStreamingBridge, type StreamingBridge, type StreamingBridgeOptions } from './bridge.js';
export { serveStreamingBridge, type ServedBridge, type ServeBridgeOptions } from './serve.js';
export { createServeToken, ServeConfigError, type ServeTokenOptions } from './serve-tokens.js';
export { ServeErrorType } from './http-errors.js';
