/**
 * A chained digest of the transcript, computed the same way in workflow code (no Node crypto there) and in the
 * worker. `digest(n)` names the first n messages: workers use it to check that a cached transcript prefix is the
 * one the workflow means. It guards against stale caches, not against an adversary, so a fast 64-bit FNV-1a is enough.
 */

const FNV_OFFSET_HIGH = 0xcbf29ce4;
const FNV_OFFSET_LOW = 0x84222325;

/**
 * FNV-1a over the UTF-16 code units of `text`, 64 bits kept as two 32-bit halves, seeded with `seed`. The loop uses
 * integer operators only, in 16-bit pieces, and names no global: in the workflow sandbox every lookup of a global
 * such as `Math` goes through the V8 context's interceptor, which made the `Math.floor` this once called per
 * character cost twenty times as much there as in the worker.
 */
function fnv1a64(text: string, seed: string): string {
  let high = FNV_OFFSET_HIGH | 0;
  let low = FNV_OFFSET_LOW | 0;
  const input = seed + '\u0000' + text;
  for (let index = 0; index < input.length; index++) {
    low ^= input.charCodeAt(index);
    // Multiply the 64-bit value by the FNV prime 2^40 + 0x1b3, modulo 2^64: the low half times 0x1b3 (its carry goes
    // to the high half), plus the high half times 0x1b3 and the low half times 2^40 (low << 8 in the high half).
    const lowBits = (low & 0xffff) * 0x1b3;
    const highBits = (low >>> 16) * 0x1b3 + (lowBits >>> 16);
    const highTimesPrime = (high & 0xffff) * 0x1b3 + ((((high >>> 16) * 0x1b3) & 0xffff) << 16);
    high = (highTimesPrime + (low << 8) + (highBits >>> 16)) | 0;
    low = (highBits << 16) | (lowBits & 0xffff);
  }
  return (high >>> 0).toString(16).padStart(8, '0') + (low >>> 0).toString(16).padStart(8, '0');
}

/**
 * JSON with object keys sorted, so the digest does not depend on key order. Undefined members are left out. Built
 * in one string without intermediate arrays: it runs over every message a workflow appends.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let json = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) json += ',';
      // A hole stays empty, as it always has (decoded payloads have none).
      if (index in value) json += canonicalJson((value[index] as unknown) ?? null);
    }
    return json + ']';
  }
  const object = value as Record<string, unknown>;
  let json = '{';
  // The default sort compares UTF-16 code units, the order the digests have always used.
  for (const key of Object.keys(object).sort()) {
    const member = object[key];
    if (member === undefined) continue;
    if (json.length > 1) json += ',';
    json += JSON.stringify(key) + ':' + canonicalJson(member);
  }
  return json + '}';
}

/** The digest of the empty transcript. */
export const EMPTY_DIGEST = '0000000000000000';

/** The digest of `previous` messages followed by `message`. */
export function chainDigest(previous: string, message: unknown): string {
  return fnv1a64(canonicalJson(message), previous);
}

/** Digests of every prefix: `result[n]` names the first n messages (so `result[0]` is EMPTY_DIGEST). */
export function prefixDigests(messages: readonly unknown[], start: string = EMPTY_DIGEST): string[] {
  const digests = [start];
  let current = start;
  for (const message of messages) {
    current = chainDigest(current, message);
    digests.push(current);
  }
  return digests;
}

/** The tool list last digested, as JSON, and its digest: a conversation's turns mostly list the same tools. */
let lastTools: { json: string; digest: string | undefined } | undefined;

/** The digest of a turn's tool list, as model calls name it; `undefined` for a turn without tools. */
export function toolsDigest(tools: readonly unknown[]): string | undefined {
  // Equal JSON means equal canonical JSON, so the digest of the same list is taken from the last call, whose
  // JSON.stringify costs a fraction of canonicalising and hashing a list of schemas again.
  const json = JSON.stringify(tools);
  if (lastTools?.json !== json) {
    lastTools = { json, digest: tools.length > 0 ? chainDigest(EMPTY_DIGEST, tools) : undefined };
  }
  return lastTools.digest;
}
