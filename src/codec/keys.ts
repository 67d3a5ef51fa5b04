/**
 * Encryption keys by id, as `DURABLE_AGENT_ENCRYPTION_KEYS` gives them: comma-separated `id:base64-of-32-bytes`. The
 * first key encrypts; every key decrypts, so a key can be rotated in front of the old ones without losing what they
 * encrypted.
 */

/** One AES-256 key and the id recorded with every payload it encrypts. */
export interface EncryptionKey {
  /** Letters, digits, `.`, `_` and `-`; recorded in plain text in each payload's metadata. */
  id: string;
  /** Exactly 32 bytes. */
  key: Uint8Array;
}

/** The environment variable that holds the keys. */
export const ENCRYPTION_KEYS_VARIABLE = 'DURABLE_AGENT_ENCRYPTION_KEYS';

export const ENCRYPTION_KEYS_SHAPE =
  'comma-separated id:key pairs, each key 32 random bytes in base64 (e.g. `openssl rand -base64 32`), such as ' +
  '2026-11:3q2+7w...=,2026-05:q83vEj...= (the first encrypts, all decrypt)';

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const KEY_BYTES = 32;

/**
 * The keys in `value`, or what is wrong with it (without the key material: the message may be logged). Accepts
 * standard and URL-safe base64, padded or not.
 */
export function parseEncryptionKeys(value: string): { keys: EncryptionKey[] } | { problem: string } {
  const keys: EncryptionKey[] = [];
  const entries = value.split(',').map((entry) => entry.trim());
  for (const [index, entry] of entries.entries()) {
    const position = `entry ${index + 1}`;
    const colon = entry.indexOf(':');
    if (colon === -1) return { problem: `${position} has no ":" between the key id and the key` };
    const id = entry.slice(0, colon).trim();
    const encoded = entry.slice(colon + 1).trim();
    if (!KEY_ID.test(id)) {
      return {
        problem: `${position}: the key id ${JSON.stringify(id)} is not 1 to 64 letters, digits, ".", "_" or "-"`,
      };
    }
    if (keys.some((key) => key.id === id)) return { problem: `the key id ${JSON.stringify(id)} appears twice` };
    const key = decodeBase64(encoded);
    if (key === undefined) return { problem: `the key of ${JSON.stringify(id)} is not base64` };
    if (key.length !== KEY_BYTES) {
      return { problem: `the key of ${JSON.stringify(id)} is ${key.length} bytes, not ${KEY_BYTES}` };
    }
    keys.push({ id, key });
  }
  return { keys };
}

/** `keys` as `DURABLE_AGENT_ENCRYPTION_KEYS` spells them (for tests and tools that start other processes). */
export function formatEncryptionKeys(keys: readonly EncryptionKey[]): string {
  return keys.map(({ id, key }) => `${id}:${Buffer.from(key).toString('base64')}`).join(',');
}

function decodeBase64(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) return undefined;
  const standard = text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
  if (standard.length % 4 === 1) return undefined;
  return Buffer.from(standard, 'base64');
}
