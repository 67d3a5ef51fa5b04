/** The codec's failures: each names the key id involved and says how to fix it. */

/** A payload names a key id that is not among the configured keys (or no keys are configured at all). */
export class EncryptionKeyNotFoundError extends Error {
  override name = 'EncryptionKeyNotFoundError';

  constructor(
    /** The key id the payload was encrypted with. */
    readonly keyId: string,
    configuredIds: readonly string[],
  ) {
    super(
      `This payload was encrypted with the key id ${JSON.stringify(keyId)}, ` +
        (configuredIds.length === 0
          ? 'but no encryption keys are configured here'
          : `which is not among the configured keys (${configuredIds.map((id) => JSON.stringify(id)).join(', ')})`) +
        `: add that key (${keyId}:<its base64>) to DURABLE_AGENT_ENCRYPTION_KEYS (or to the encryptionKeys option), ` +
        'after the key that encrypts.',
    );
  }
}

/** A payload could not be decrypted: the key under its id is not the key it was encrypted with, or it was altered. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';

  constructor(
    /** The key id the payload names. */
    readonly keyId: string,
    options?: ErrorOptions,
  ) {
    super(
      `Cannot decrypt a payload encrypted with the key id ${JSON.stringify(keyId)}: the key configured under that id ` +
        'is not the one it was encrypted with, or the payload was altered. Configure the original key under that id.',
      options,
    );
  }
}

/** A payload marked as encrypted whose metadata or data is not in the codec's format. */
export class MalformedEncryptedPayloadError extends Error {
  override name = 'MalformedEncryptedPayloadError';
}
