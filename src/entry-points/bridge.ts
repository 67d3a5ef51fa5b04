/** durable-agent/bridge: the HTTP bridge that serves conversations to browsers (docs/streaming.md). */
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
} from '../bridge/index.js';
