/**
 * A chained digest of the transcript, computed the same way in workflow code (no Node crypto there) and in the
 * worker. `digest(n)` names the first n messages: workers use it to check that a cached transcript prefix is the
 * one the workflow means. It guards against stale caches, not against an adversary, so a fast 64-bit FNV-1a is enough.
 */

const FNV_OFFSET_HIGH = 0xcbf29ce4;
const FNV_OFFSET_LOW = 0x84222325;

/** FNV-1a over the UTF-16 code units of `text`, 64 bits kept as two 32-bit halves, seeded with `seed`. */
function fnv1a64(text: string, seed: string): string {
  let high = FNV_OFFSET_HIGH;
  let low = FNV_OFFSET_LOW;
  const input = seed + '\u0000' + text;
  for (let index = 0; index < input.length; index++) {
    low = (low ^ input.charCodeAt(index)) >>> 0;
    // Multiply the 64-bit value by the FNV prime 2^40 + 0x1b3, in 32-bit pieces.
    const lowTimesPrime = low * 0x1b3;
    const carry = Math.floor(lowTimesPrime / 0x100000000);
    const newHigh = (high * 0x1b3 + (low << 8) + carry) >>> 0;
    low = lowTimesPrime >>> 0;
    high = newHigh;
  }
  return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0');
}

/** JSON with object keys sorted, so the digest does not depend on key order. Undefined members are left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return '[' + value.map((item) => canonicalJson(item ?? null)).join(',') + ']';
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return '{' + entries.map(([key, member]) => JSON.stringify(key) + ':' + canonicalJson(member)).join(',') + '}';
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

/** The digest of a turn's tool list, as model calls name it; `undefined` for a turn without tools. */
export function toolsDigest(tools: readonly unknown[]): string | undefined {
  return tools.length > 0 ? chainDigest(EMPTY_DIGEST, tools) : undefined;
}
