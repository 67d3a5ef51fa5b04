/** durable-agent/codec: encryption of payloads and the codec server for the Web UI and the CLI (docs/security.md). */
export { encryptionDataConverter, workerDataConverter } from './data-converter.js';
export { EncryptionCodec } from './encryption-codec.js';
export {
  EncryptionKeyNotFoundError,
  MalformedEncryptedPayloadError,
  PayloadDecryptionError,
} from '../shared/encryption-errors.js';
export { parseEncryptionKeys, type EncryptionKey } from './keys.js';
export { createCodecApp, serveCodec, type CodecServerOptions, type RunningCodecServer } from './codec-server.js';
