import { fileURLToPath } from 'node:url';
import type { DataConverter, PayloadCodec } from '@temporalio/common';
import { EncryptionCodec } from './encryption-codec.js';
import type { EncryptionKey } from './keys.js';
import { WorkerPayloadCodec } from './worker-codec.js';

/**
 * The failure converter module ({@link encryptionDataConverter}): Temporal's default with `encodeCommonAttributes`,
 * exported as `failureConverter`. Plain CommonJS, so `require()` loads it from the sources and from dist alike, and
 * the workflow bundler bundles it (`bundleWorkflows({ encodeFailures: true })`).
 */
export const ENCODED_FAILURE_CONVERTER_PATH = fileURLToPath(new URL('./failure-converter.cjs', import.meta.url));

/**
 * The failure converter module without keys: Temporal's default, with no stack traces in failures (a stack names the
 * worker's install directory, and a failure reaches every client and stays in history). The worker's log keeps them.
 */
export const STACKLESS_FAILURE_CONVERTER_PATH = fileURLToPath(
  new URL('./stackless-failure-converter.cjs', import.meta.url),
);

/** The failure converter a data converter with these keys names, and a workflow bundle for it must be built with. */
export function failureConverterPath(keys: readonly EncryptionKey[] = []): string {
  return keys.length === 0 ? STACKLESS_FAILURE_CONVERTER_PATH : ENCODED_FAILURE_CONVERTER_PATH;
}

/**
 * The data converter of every durable-agent client: the default JSON payloads, encrypted when keys are given. With
 * keys, failures' messages and stack traces are moved into a payload (Temporal's `encodeCommonAttributes`) so the codec
 * encrypts them too. Without keys nothing is encrypted, and an encrypted payload met on the way in fails by name
 * (saying which key id it needs) instead of as an unknown encoding.
 */
export function encryptionDataConverter(keys: readonly EncryptionKey[] = []): DataConverter {
  return withFailures(keys, new EncryptionCodec(keys));
}

/**
 * The data converter of a durable-agent worker (and of replaying its histories): as {@link encryptionDataConverter},
 * but a client's payload it cannot decrypt reaches the workflow as a marker that the workflow refuses, instead of
 * failing the workflow task (see {@link WorkerPayloadCodec}).
 */
export function workerDataConverter(keys: readonly EncryptionKey[] = []): DataConverter {
  return withFailures(keys, new WorkerPayloadCodec(keys));
}

function withFailures(keys: readonly EncryptionKey[], codec: PayloadCodec): DataConverter {
  return { payloadCodecs: [codec], failureConverterPath: failureConverterPath(keys) };
}
