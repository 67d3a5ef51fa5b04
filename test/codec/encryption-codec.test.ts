import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { EncryptionKeyNotFoundError, PayloadDecryptionError } from '../../src/shared/encryption-errors.js';
import { formatEncryptionKeys } from '../../src/codec/keys.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import {
  MAX_ACTIVITY_PAYLOAD_BYTES,
  MAX_PART_BYTES,
  TEMPORAL_PAYLOAD_LIMIT_BYTES,
  TEMPORAL_PAYLOAD_WARN_BYTES,
} from '../../src/shared/payload-limits.js';
import { newKey } from './keys.js';

const metadata = (payload: Payload, key: string) => Buffer.from(payload.metadata?.[key] ?? []).toString('utf8');
const wireBytes = (payload: Payload) => proto.temporal.api.common.v1.Payload.encode(payload).finish().length;

describe('EncryptionCodec', () => {
  const a = newKey('key-a');
  const b = newKey('key-b');
  const secret = `the user's secret ${randomBytes(8).toString('hex')}`;
  const plain = () => defaultPayloadConverter.toPayload({ message: secret, repeated: secret.repeat(50) });

  it('encrypts with the first key: the data hides the text, the metadata names the key, decoding restores it', async () => {
    const codec = new EncryptionCodec([a, b]);
    const [encrypted] = await codec.encode([plain()]);
    expect(metadata(encrypted!, 'encoding')).toBe('binary/encrypted');
    expect(metadata(encrypted!, 'encryption-key-id')).toBe('key-a');
    expect(Buffer.from(encrypted!.data!).includes(secret)).toBe(false);
    // Compressed before encryption: the repeated text makes it much smaller than the JSON.
    expect(encrypted!.data!.length).toBeLessThan(plain().data!.length / 4);
    const [decoded] = await codec.decode([encrypted!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ message: secret, repeated: secret.repeat(50) });
  });

  it('encrypts the same payload differently each time (a fresh nonce)', async () => {
    const codec = new EncryptionCodec([a]);
    const [first, second] = await codec.encode([plain(), plain()]);
    expect(Buffer.from(first!.data!).equals(Buffer.from(second!.data!))).toBe(false);
  });

  it('rotation: a codec whose first key is new still decrypts what the old key encrypted', async () => {
    const [old] = await new EncryptionCodec([a]).encode([plain()]);
    const rotated = new EncryptionCodec([b, a]);
    const [decoded] = await rotated.decode([old!]);
    expect(defaultPayloadConverter.fromPayload<{ message: string }>(decoded!).message).toBe(secret);
    const [fresh] = await rotated.encode([plain()]);
    expect(metadata(fresh!, 'encryption-key-id')).toBe('key-b');
  });

  it('a payload whose key id is not configured fails with EncryptionKeyNotFoundError naming that id', async () => {
    const [encrypted] = await new EncryptionCodec([a]).encode([plain()]);
    const error = await new EncryptionCodec([b]).decode([encrypted!]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EncryptionKeyNotFoundError);
    expect((error as EncryptionKeyNotFoundError).keyId).toBe('key-a');
    expect((error as Error).message).toMatch(
      /key id "key-a".*not among the configured keys \("key-b"\).*DURABLE_AGENT_ENCRYPTION_KEYS/,
    );
    const none = await new EncryptionCodec([]).decode([encrypted!]).catch((caught: unknown) => caught);
    expect(none).toBeInstanceOf(EncryptionKeyNotFoundError);
    expect((none as Error).message).toMatch(/"key-a", but no encryption keys are configured here/);
  });

  it('a different key under the same id, or altered data, fails with PayloadDecryptionError', async () => {
    const [encrypted] = await new EncryptionCodec([a]).encode([plain()]);
    const impostor = { id: 'key-a', key: randomBytes(32) };
    const error = await new EncryptionCodec([impostor]).decode([encrypted!]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PayloadDecryptionError);
    expect((error as Error).message).toMatch(/key id "key-a"/);
    const altered = Buffer.from(encrypted!.data!);
    altered[20] = altered[20]! ^ 1;
    const tampered = await new EncryptionCodec([a])
      .decode([{ ...encrypted!, data: altered }])
      .catch((caught: unknown) => caught);
    expect(tampered).toBeInstanceOf(PayloadDecryptionError);
  });

  it('the key id is authenticated: relabelling a payload with another configured id fails', async () => {
    const [encrypted] = await new EncryptionCodec([a]).encode([plain()]);
    const relabelled = {
      ...encrypted!,
      metadata: { ...encrypted!.metadata, 'encryption-key-id': Buffer.from('key-b') },
    };
    const sameKeyTwice = new EncryptionCodec([a, { id: 'key-b', key: a.key }]);
    await expect(sameKeyTwice.decode([relabelled])).rejects.toBeInstanceOf(PayloadDecryptionError);
  });

  it('plain payloads (written before encryption was turned on) pass through decoding; no keys, no encryption', async () => {
    const codec = new EncryptionCodec([a]);
    const [decoded] = await codec.decode([plain()]);
    expect(defaultPayloadConverter.fromPayload<{ message: string }>(decoded!).message).toBe(secret);
    const [untouched] = await new EncryptionCodec([]).encode([plain()]);
    expect(metadata(untouched!, 'encoding')).toBe('json/plain');
  });

  it('incompressible payloads at the bounds of src/shared/payload-limits.ts stay under the limits once encrypted', async () => {
    const codec = new EncryptionCodec([a]);
    const bounds = [
      [MAX_PART_BYTES, TEMPORAL_PAYLOAD_WARN_BYTES],
      [MAX_ACTIVITY_PAYLOAD_BYTES, TEMPORAL_PAYLOAD_LIMIT_BYTES],
    ] as const;
    for (const [size, limit] of bounds) {
      const payload = { metadata: { encoding: Buffer.from('json/plain') }, data: randomBytes(size) };
      const [encrypted] = await codec.encode([payload]);
      expect(wireBytes(encrypted!)).toBeGreaterThan(size);
      expect(wireBytes(encrypted!)).toBeLessThan(limit);
    }
  });

  it('a small payload is stored in a raw deflate block without zlib, which every release decodes; larger ones are deflated', async () => {
    const codec = new EncryptionCodec([a]);
    const small = defaultPayloadConverter.toPayload({ message: secret });
    const [stored, deflated] = await codec.encode([small, plain()]);
    // As a decoder that always inflates (every release so far) reads it: AES-256-GCM, then raw inflate.
    const inflated = (encrypted: Payload) => {
      const data = Buffer.from(encrypted.data!);
      const decipher = createDecipheriv('aes-256-gcm', a.key, data.subarray(0, 12));
      decipher.setAAD(Buffer.from(a.id));
      decipher.setAuthTag(data.subarray(data.length - 16));
      const compressed = Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]);
      return { compressed, payload: proto.temporal.api.common.v1.Payload.decode(inflateRawSync(compressed)) };
    };
    const smallBytes = proto.temporal.api.common.v1.Payload.encode(small).finish();
    const read = inflated(stored!);
    // One final stored block: the header byte, the length and its complement, then the bytes as they are.
    expect(read.compressed[0]).toBe(0x01);
    expect(read.compressed.subarray(5).equals(Buffer.from(smallBytes))).toBe(true);
    expect(defaultPayloadConverter.fromPayload(read.payload)).toEqual({ message: secret });
    expect(inflated(deflated!).compressed.length).toBeLessThan(plain().data!.length / 4);
    const [decoded] = await codec.decode([stored!]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ message: secret });
  });

  it('a small payload deflated by an earlier release still decodes', async () => {
    const small = defaultPayloadConverter.toPayload({ message: secret });
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', a.key, nonce);
    cipher.setAAD(Buffer.from(a.id));
    const compressed = deflateRawSync(proto.temporal.api.common.v1.Payload.encode(small).finish());
    const ciphertext = Buffer.concat([cipher.update(compressed), cipher.final()]);
    const earlier: Payload = {
      metadata: {
        encoding: Buffer.from('binary/encrypted'),
        'encryption-key-id': Buffer.from(a.id),
        'encryption-cipher': Buffer.from('deflate+AES-256-GCM'),
      },
      data: Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]),
    };
    const [decoded] = await new EncryptionCodec([a]).decode([earlier]);
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ message: secret });
  });
});

describe('DURABLE_AGENT_ENCRYPTION_KEYS', () => {
  const a = newKey('2026-11');
  const b = newKey('2026-05');

  it('reads comma-separated id:base64 keys in order; unset means none', () => {
    const keys = loadConfig({ DURABLE_AGENT_ENCRYPTION_KEYS: ` ${formatEncryptionKeys([a, b])} ` }).encryptionKeys;
    expect(keys.map((key) => key.id)).toEqual(['2026-11', '2026-05']);
    expect(Buffer.from(keys[0]!.key).equals(Buffer.from(a.key))).toBe(true);
    expect(loadConfig({}).encryptionKeys).toEqual([]);
    const urlSafe = `k:${Buffer.from(a.key).toString('base64url')}`;
    expect(Buffer.from(loadConfig({ DURABLE_AGENT_ENCRYPTION_KEYS: urlSafe }).encryptionKeys[0]!.key)).toEqual(
      Buffer.from(a.key),
    );
  });

  it.each([
    ['no colon', 'justakey', /entry 1 has no ":"/],
    ['a short key', `k:${randomBytes(16).toString('base64')}`, /the key of "k" is 16 bytes, not 32/],
    ['not base64', 'k:not*base64!', /the key of "k" is not base64/],
    ['a bad id', `a b:${randomBytes(32).toString('base64')}`, /the key id "a b" is not/],
    [
      'an id twice',
      `k:${randomBytes(32).toString('base64')},k:${randomBytes(32).toString('base64')}`,
      /"k" appears twice/,
    ],
  ])(
    'a malformed value (%s) is a ConfigError naming the variable and the shape, without the key',
    (_name, value, problem) => {
      let error: unknown;
      try {
        loadConfig({ DURABLE_AGENT_ENCRYPTION_KEYS: value });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toMatch(/^Invalid DURABLE_AGENT_ENCRYPTION_KEYS \(/);
      expect(message).toMatch(problem);
      expect(message).toMatch(/expected comma-separated id:key pairs, each key 32 random bytes in base64/);
      const material = value.split(':').at(-1)!;
      if (material.length > 8) expect(message).not.toContain(material);
    },
  );
});
