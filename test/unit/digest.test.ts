import { describe, expect, it } from 'vitest';
import { canonicalJson, chainDigest, EMPTY_DIGEST, prefixDigests, toolsDigest } from '../../src/shared/digest.js';

/**
 * The reference: FNV-1a 64 written with BigInt, straight from the definition, over the UTF-16 code units of
 * `seed + NUL + text` (the order digest.ts documents), so the 32-bit arithmetic in the source is checked against it.
 */
const FNV_OFFSET = 0xcbf29ce484222325n;
const FNV_PRIME = 0x100000001b3n;
const MASK_64 = (1n << 64n) - 1n;

function referenceFnv1a64(text: string, seed: string): string {
  const input = seed + '\u0000' + text;
  let hash = FNV_OFFSET;
  for (let index = 0; index < input.length; index++) {
    hash ^= BigInt(input.charCodeAt(index));
    hash = (hash * FNV_PRIME) & MASK_64;
  }
  return hash.toString(16).padStart(16, '0');
}

describe('canonicalJson', () => {
  it('digest: canonical JSON does not depend on key order, at any depth', () => {
    const a = { role: 'assistant', toolCalls: [{ id: 'c1', name: 'x', arguments: '{}' }], content: null };
    const b = { content: null, toolCalls: [{ arguments: '{}', name: 'x', id: 'c1' }], role: 'assistant' };

    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe(
      '{"content":null,"role":"assistant","toolCalls":[{"arguments":"{}","id":"c1","name":"x"}]}',
    );
  });

  it('digest: canonical JSON is JSON.parse-able and equal to the value, as JSON.stringify would give it', () => {
    const value = { z: [1, 'two', { y: true, x: null }], a: 'quote " and \\ and \u2028', m: -0.5 };
    expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
  });

  it('digest: undefined members are dropped and undefined array items become null, as in JSON', () => {
    expect(canonicalJson({ b: undefined, a: 1 })).toBe('{"a":1}');
    expect(canonicalJson({ a: 1 })).toBe(canonicalJson({ a: 1, b: undefined }));
    expect(canonicalJson([1, undefined, 2])).toBe(JSON.stringify([1, undefined, 2]));
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('digest: a message with an optional member left undefined digests like the one without it', () => {
    const withUndefined = { role: 'user', content: 'Hi', id: undefined };
    expect(chainDigest(EMPTY_DIGEST, withUndefined)).toBe(chainDigest(EMPTY_DIGEST, { role: 'user', content: 'Hi' }));
  });

  it('digest: scalars are written as JSON writes them', () => {
    for (const value of ['text', 12.5, true, false, null]) expect(canonicalJson(value)).toBe(JSON.stringify(value));
  });
});

describe('chainDigest', () => {
  it('digest: a chained digest is FNV-1a 64 of the canonical JSON seeded with the previous digest', () => {
    const message = { role: 'user', content: 'What is the weather in Paris?' };
    const first = chainDigest(EMPTY_DIGEST, message);

    expect(first).toBe(referenceFnv1a64(canonicalJson(message), EMPTY_DIGEST));
    expect(chainDigest(first, message)).toBe(referenceFnv1a64(canonicalJson(message), first));
  });

  it('digest: matches the BigInt reference for non-ASCII text, surrogate pairs and long input', () => {
    const messages = [
      { role: 'user', content: 'Grüße, 東京, emoji 🧪🚀' },
      { role: 'assistant', content: '\u0000\uffff' + 'x'.repeat(10_000) },
      { role: 'tool', toolCallId: 'call_9', name: 'files__read', content: '', outcome: 'ok' },
    ];
    let previous = EMPTY_DIGEST;
    for (const message of messages) {
      const digest = chainDigest(previous, message);
      expect(digest).toBe(referenceFnv1a64(canonicalJson(message), previous));
      previous = digest;
    }
  });

  it('digest: a digest is 16 lower-case hex digits', () => {
    expect(chainDigest(EMPTY_DIGEST, { role: 'user', content: 'a' })).toMatch(/^[0-9a-f]{16}$/);
    expect(EMPTY_DIGEST).toBe('0000000000000000');
  });

  it('digest: depends on the message content, the order of messages and the previous digest', () => {
    const a = { role: 'user', content: 'a' };
    const b = { role: 'user', content: 'b' };
    expect(chainDigest(EMPTY_DIGEST, a)).not.toBe(chainDigest(EMPTY_DIGEST, b));
    expect(chainDigest(chainDigest(EMPTY_DIGEST, a), b)).not.toBe(chainDigest(chainDigest(EMPTY_DIGEST, b), a));
  });
});

describe('prefixDigests', () => {
  it('digest: result[n] names the first n messages, starting from EMPTY_DIGEST', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
    ];
    const digests = prefixDigests(messages);

    expect(digests).toHaveLength(4);
    expect(digests[0]).toBe(EMPTY_DIGEST);
    let expected = EMPTY_DIGEST;
    messages.forEach((message, index) => {
      expected = referenceFnv1a64(canonicalJson(message), expected);
      expect(digests[index + 1]).toBe(expected);
    });
  });

  it('digest: digests continue from a given start, as if the earlier messages were included', () => {
    const messages = [
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
      { role: 'user', content: 'three' },
    ];
    const all = prefixDigests(messages);
    const rest = prefixDigests(messages.slice(1), all[1]);

    expect(rest).toEqual(all.slice(1));
  });

  it('digest: the empty transcript has only the empty digest', () => {
    expect(prefixDigests([])).toEqual([EMPTY_DIGEST]);
  });
});

describe('toolsDigest', () => {
  const echo = { name: 'test__echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };
  const add = { name: 'test__add', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } };

  it('digest: a tool list digests as its canonical JSON chained from the empty digest, whichever list came before', () => {
    const expected = (tools: unknown[]) => referenceFnv1a64(canonicalJson(tools), EMPTY_DIGEST);
    expect(toolsDigest([echo])).toBe(expected([echo]));
    expect(toolsDigest([echo])).toBe(expected([echo]));
    expect(toolsDigest([echo, add])).toBe(expected([echo, add]));
    expect(toolsDigest([{ inputSchema: echo.inputSchema, name: echo.name }])).toBe(expected([echo]));
    expect(toolsDigest([echo])).toBe(expected([echo]));
    expect(toolsDigest([])).toBeUndefined();
    expect(toolsDigest([add])).toBe(expected([add]));
  });
});
