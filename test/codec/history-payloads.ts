import type { Payload } from '@temporalio/common';

/** Every payload in a raw (undecoded) history, found by walking it: event inputs, results, signals, updates, memo... */
export function payloadsIn(value: unknown): Payload[] {
  const found: Payload[] = [];
  const seen = new Set<unknown>();
  const visit = (item: unknown): void => {
    if (typeof item !== 'object' || item === null || seen.has(item) || item instanceof Uint8Array) return;
    seen.add(item);
    const candidate = item as Payload;
    if (candidate.metadata?.encoding instanceof Uint8Array) {
      found.push(candidate);
      return;
    }
    for (const key of Object.keys(item)) visit((item as Record<string, unknown>)[key]);
  };
  visit(value);
  return found;
}

export const encodingOf = (payload: Payload) => Buffer.from(payload.metadata?.encoding ?? []).toString('utf8');
export const keyIdOf = (payload: Payload) =>
  Buffer.from(payload.metadata?.['encryption-key-id'] ?? []).toString('utf8');
