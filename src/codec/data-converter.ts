import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec } from './encryption-codec.js';
import type { EncryptionKey } from './keys.js';

/**
 * The data converter of every durable-agent client and worker: the default JSON payloads, encrypted when keys are
 * given. Without keys nothing is encrypted, and an encrypted payload met on the way in fails by name (saying which
 * key id it needs) instead of as an unknown encoding.
 */
export function encryptionDataConverter(keys: readonly EncryptionKey[] = []): DataConverter {
  return { payloadCodecs: [new EncryptionCodec(keys)] };
}
