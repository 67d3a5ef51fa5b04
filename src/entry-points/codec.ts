/** durable-agent/codec: encryption of payloads and the codec server for the Web UI and the CLI (docs/security.md). */
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
} from '../codec/index.js';
