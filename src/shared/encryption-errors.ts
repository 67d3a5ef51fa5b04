/** The codec's failures: each names the key id involved and says how to fix it. */

import { DurableAgentError } from './errors.js';

/**
 * Who could not decrypt: this process (its own keys are wrong), or the worker, which refused what this process sent
 * (this process must get the worker's keys).
 */
export type DecryptingSide = 'here' | 'worker';

const GIVE_WORKER_KEYS =
  "Give this client the worker's keys (DURABLE_AGENT_ENCRYPTION_KEYS, or the encryptionKeys option), in the " +
  "worker's order: the first one encrypts.";

/** A payload names a key id that is not among the configured keys (or no keys are configured at all). */
export class EncryptionKeyNotFoundError extends DurableAgentError {
  constructor(
    /** The key id the payload was encrypted with. */
    readonly keyId: string,
    /** The key ids of the side that could not decrypt. */
    readonly configuredIds: readonly string[],
    /** Default `here`. */
    readonly side: DecryptingSide = 'here',
  ) {
    super(
      side === 'worker'
        ? `The worker could not decrypt what this client sent: it was encrypted with the key id ` +
            `${JSON.stringify(keyId)}, which is not among the worker's keys (${quoted(configuredIds)}). ` +
            GIVE_WORKER_KEYS
        : `This payload was encrypted with the key id ${JSON.stringify(keyId)}, ` +
            (configuredIds.length === 0
              ? 'but no encryption keys are configured here'
              : `which is not among the configured keys (${quoted(configuredIds)})`) +
            `: add that key (${keyId}:<its base64>) to DURABLE_AGENT_ENCRYPTION_KEYS (or to the encryptionKeys ` +
            'option), after the key that encrypts.',
    );
  }
}

/** A payload could not be decrypted: the key under its id is not the key it was encrypted with, or it was altered. */
export class PayloadDecryptionError extends DurableAgentError {
  constructor(
    /** The key id the payload names. */
    readonly keyId: string,
    options?: ErrorOptions,
    /** Default `here`. */
    readonly side: DecryptingSide = 'here',
  ) {
    super(
      side === 'worker'
        ? `The worker could not decrypt what this client sent: it was encrypted with the key id ` +
            `${JSON.stringify(keyId)}, but the worker's key under that id is another key (or the payload was ` +
            `altered). ${GIVE_WORKER_KEYS}`
        : `Cannot decrypt a payload encrypted with the key id ${JSON.stringify(keyId)}: the key configured under that ` +
            'id is not the one it was encrypted with, or the payload was altered. Configure the original key under ' +
            'that id.',
      options,
    );
  }
}

/** A payload marked as encrypted whose metadata or data is not in the codec's format. */
export class MalformedEncryptedPayloadError extends DurableAgentError {}

/** The codec's own errors: keys that do not match (on this side, or the worker's refusal) or a foreign payload. */
export function isEncryptionKeyError(
  error: unknown,
): error is EncryptionKeyNotFoundError | PayloadDecryptionError | MalformedEncryptedPayloadError {
  return (
    error instanceof EncryptionKeyNotFoundError ||
    error instanceof PayloadDecryptionError ||
    error instanceof MalformedEncryptedPayloadError
  );
}

function quoted(ids: readonly string[]): string {
  return ids.length === 0 ? 'none' : ids.map((id) => JSON.stringify(id)).join(', ');
}
