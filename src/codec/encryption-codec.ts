import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
// @temporalio/proto is CommonJS: Node's ESM loader offers its exports on the default import only.
import proto from '@temporalio/proto';
import {
  EncryptionKeyNotFoundError,
  MalformedEncryptedPayloadError,
  PayloadDecryptionError,
} from '../shared/encryption-errors.js';
import type { EncryptionKey } from './keys.js';

/**
 * The payload codec that encrypts what durable-agent records in Temporal: each payload (its metadata and data, as
 * protobuf) is compressed with raw deflate (a small one is stored in a raw deflate block as it is), then encrypted with AES-256-GCM under the first key, a fresh 96-bit nonce
 * each time and the key id as additional authenticated data. The result is a payload whose metadata says
 * `encoding: binary/encrypted` and which key encrypted it, and whose data is nonce, ciphertext and tag.
 *
 * Decoding picks the key by the id in the payload, so any configured key decrypts what it once encrypted; payloads
 * that are not encrypted (written before encryption was turned on) pass through unchanged. With no keys, encoding
 * passes everything through and an encrypted payload fails to decode by name.
 */
export class EncryptionCodec implements PayloadCodec {
  private readonly keys: ReadonlyMap<string, Uint8Array>;
  private readonly encrypting: EncryptionKey | undefined;

  constructor(keys: readonly EncryptionKey[]) {
    this.keys = new Map(keys.map(({ id, key }) => [id, key]));
    this.encrypting = keys[0];
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const key = this.encrypting;
    if (key === undefined) return payloads;
    return payloads.map((payload) => encryptPayload(payload, key));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => (isEncrypted(payload) ? this.decryptPayload(payload) : payload));
  }

  private decryptPayload(payload: Payload): Payload {
    const metadata = payload.metadata ?? {};
    const keyId = text(metadata[METADATA.keyId]);
    const cipher = text(metadata[METADATA.cipher]);
    if (keyId === undefined || cipher !== CIPHER) {
      throw new MalformedEncryptedPayloadError(
        `An encrypted payload has ${keyId === undefined ? 'no key id' : `the cipher ${JSON.stringify(cipher)}`} ` +
          `in its metadata; durable-agent writes ${METADATA.keyId} and ${METADATA.cipher}=${CIPHER}.`,
      );
    }
    const key = this.keys.get(keyId);
    if (key === undefined) throw new EncryptionKeyNotFoundError(keyId, [...this.keys.keys()]);
    const data = payload.data ?? new Uint8Array();
    if (data.length < NONCE_BYTES + TAG_BYTES) {
      throw new MalformedEncryptedPayloadError(`An encrypted payload (key id ${keyId}) is too short to hold any data.`);
    }
    let compressed: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(keyId));
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      compressed = Buffer.concat([
        decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch (error) {
      throw new PayloadDecryptionError(keyId, { cause: error });
    }
    return Payload.decode(inflate(compressed));
  }
}

/** The `encoding` of an encrypted payload, as Temporal's samples and the Web UI's codec tooling spell it. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** How the data is made: raw deflate, then AES-256-GCM. */
export const CIPHER = 'deflate+AES-256-GCM';
export const METADATA = { encoding: 'encoding', keyId: 'encryption-key-id', cipher: 'encryption-cipher' } as const;

const NONCE_BYTES = 12;
/**
 * Smaller payloads are not compressed: deflate costs about 0.1 ms a payload whatever its size (zlib sets up its
 * window and tables each time), and saves at most a few hundred bytes below this. Most of a step's payloads (tool
 * results, heartbeat details, short answers) are this small.
 */
const COMPRESSED_FROM_BYTES = 1024;
/** A raw deflate block stored as it is: the header byte of a final stored block, then its length and the length's complement. */
const STORED_BLOCK_HEADER_BYTES = 5;
const FINAL_STORED_BLOCK = 0x01;
const TAG_BYTES = 16;
const { Payload } = proto.temporal.api.common.v1;

function encryptPayload(payload: Payload, { id, key }: EncryptionKey): Payload {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(id));
  const encoded = Payload.encode(payload).finish();
  const compressed = encoded.length < COMPRESSED_FROM_BYTES ? storedBlock(encoded) : deflateRawSync(encoded);
  const ciphertext = Buffer.concat([cipher.update(compressed), cipher.final()]);
  return {
    metadata: {
      [METADATA.encoding]: Buffer.from(ENCRYPTED_ENCODING),
      [METADATA.keyId]: Buffer.from(id),
      [METADATA.cipher]: Buffer.from(CIPHER),
    },
    data: Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]),
  };
}

/** `bytes` as one final stored block of raw deflate: what any inflater reads back, made without zlib. */
function storedBlock(bytes: Uint8Array): Buffer {
  const block = Buffer.allocUnsafe(STORED_BLOCK_HEADER_BYTES + bytes.length);
  block[0] = FINAL_STORED_BLOCK;
  block.writeUInt16LE(bytes.length, 1);
  block.writeUInt16LE(bytes.length ^ 0xffff, 3);
  block.set(bytes, STORED_BLOCK_HEADER_BYTES);
  return block;
}

/** Raw deflate undone; one final stored block (see {@link storedBlock}) is read without zlib, as inflating it would. */
function inflate(compressed: Buffer): Buffer {
  if (compressed.length >= STORED_BLOCK_HEADER_BYTES && compressed[0] === FINAL_STORED_BLOCK) {
    const length = compressed.readUInt16LE(1);
    const complement = compressed.readUInt16LE(3);
    if ((length ^ 0xffff) === complement && compressed.length === STORED_BLOCK_HEADER_BYTES + length) {
      return compressed.subarray(STORED_BLOCK_HEADER_BYTES);
    }
  }
  return inflateRawSync(compressed);
}

function isEncrypted(payload: Payload): boolean {
  return text(payload.metadata?.[METADATA.encoding]) === ENCRYPTED_ENCODING;
}

function text(bytes: Uint8Array | null | undefined): string | undefined {
  return bytes === undefined || bytes === null ? undefined : Buffer.from(bytes).toString('utf8');
}
