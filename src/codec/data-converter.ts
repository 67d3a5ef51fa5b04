import { fileURLToPath } from 'node:url';
import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec } from './encryption-codec.js';
import type { EncryptionKey } from './keys.js';

/**
 * The failure converter module ({@link encryptionDataConverter}): Temporal's default with `encodeCommonAttributes`,
 * exported as `failureConverter`. Plain CommonJS, so `require()` loads it from the sources and from dist alike, and
 * the workflow bundler bundles it (`bundleWorkflows({ encodeFailures: true })`).
 */
export const ENCODED_FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.cjs', import.meta.url));

/**
 * The data converter of every durable-agent client and worker: the default JSON payloads, encrypted when keys are
 * given. With keys, failures' messages and stack traces are moved into a payload (Temporal's `encodeCommonAttributes`)
 * so the codec encrypts them too. Without keys nothing is encrypted, and an encrypted payload met on the way in fails
 * by name (saying which key id it needs) instead of as an unknown encoding.
 */
export function encryptionDataConverter(keys: readonly EncryptionKey[] = []): DataConverter {
  const codec = { payloadCodecs: [new EncryptionCodec(keys)] };
  return keys.length === 0 ? codec : { ...codec, failureConverterPath: ENCODED_FAILURE_CONVERTER_PATH };
}
