import { randomBytes } from 'node:crypto';
import type { EncryptionKey } from '../../src/codec/keys.js';

/** A fresh random AES-256 key under `id`. */
export function newKey(id: string): EncryptionKey {
  return { id, key: randomBytes(32) };
}
