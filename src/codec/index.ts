export { encryptionDataConverter, workerDataConverter } from './data-converter.js';
export { EncryptionCodec, ENCRYPTED_ENCODING } from './encryption-codec.js';
export { EncryptionKeyNotFoundError, MalformedEncryptedPayloadError, PayloadDecryptionError } from './errors.js';
export { formatEncryptionKeys, parseEncryptionKeys, type EncryptionKey } from './keys.js';
export {
  createCodecApp,
  DEFAULT_CODEC_CORS_ORIGINS,
  DEFAULT_CODEC_PORT,
  serveCodec,
  type CodecServerOptions,
  type RunningCodecServer,
} from './codec-server.js';
