import {
  EncryptionKeyNotFoundError,
  MalformedEncryptedPayloadError,
  PayloadDecryptionError,
} from './encryption-errors.js';

/**
 * What the worker's codec hands the workflow in place of a client's payload it cannot decrypt (src/codec/worker-codec.ts),
 * so that the workflow refuses that one signal, update or query instead of failing its whole workflow task. Plain JSON
 * with no Node imports: the workflow bundle reads it too.
 */
export interface Undecodable {
  undecodable: {
    /** The key id the payload names (empty when it names none). */
    keyId: string;
    /** `unknown-key`: the worker has no key under that id; `wrong-key`: another key under it; `malformed`: not ours. */
    reason: UndecodableReason;
    /** The worker's key ids, for the message (key ids are plain in every payload's metadata anyway). */
    workerKeyIds: string[];
  };
}

export type UndecodableReason = 'unknown-key' | 'wrong-key' | 'malformed';

const REASONS: readonly string[] = ['unknown-key', 'wrong-key', 'malformed'] satisfies UndecodableReason[];

export function isUndecodable(value: unknown): value is Undecodable {
  if (typeof value !== 'object' || value === null || Object.keys(value).length !== 1) return false;
  const inner = (value as { undecodable?: unknown }).undecodable;
  if (typeof inner !== 'object' || inner === null) return false;
  const { keyId, reason, workerKeyIds } = inner as Record<string, unknown>;
  return (
    typeof keyId === 'string' &&
    typeof reason === 'string' &&
    REASONS.includes(reason) &&
    Array.isArray(workerKeyIds) &&
    workerKeyIds.every((id) => typeof id === 'string')
  );
}

/** The first undecodable argument, if any. */
export function firstUndecodable(args: readonly unknown[]): Undecodable | undefined {
  return args.find(isUndecodable);
}

/** The marker for a decryption failure of the worker's codec, or `undefined` for any other error. */
export function undecodableFrom(error: unknown, workerKeyIds: string[]): Undecodable | undefined {
  if (error instanceof EncryptionKeyNotFoundError) {
    return { undecodable: { keyId: error.keyId, reason: 'unknown-key', workerKeyIds } };
  }
  if (error instanceof PayloadDecryptionError) {
    return { undecodable: { keyId: error.keyId, reason: 'wrong-key', workerKeyIds } };
  }
  if (error instanceof MalformedEncryptedPayloadError) {
    return { undecodable: { keyId: '', reason: 'malformed', workerKeyIds } };
  }
  return undefined;
}

const MALFORMED =
  'The worker could not decrypt what this client sent: it is not in the encrypted format durable-agent writes.';

/** The error that explains the refusal to the client: which key id, why, and what to do. */
export function refusalError(
  marker: Undecodable,
): EncryptionKeyNotFoundError | PayloadDecryptionError | MalformedEncryptedPayloadError {
  const { keyId, reason, workerKeyIds } = marker.undecodable;
  if (reason === 'unknown-key') return new EncryptionKeyNotFoundError(keyId, workerKeyIds, 'worker');
  if (reason === 'wrong-key') return new PayloadDecryptionError(keyId, undefined, 'worker');
  return new MalformedEncryptedPayloadError(MALFORMED);
}

/**
 * The error {@link refusalError} made, back from its message: a failed query reaches a TypeScript client as its
 * message only (QueryNotRegisteredError), so the message is all there is to recognise it by.
 */
export function refusalFromMessage(
  message: string,
): EncryptionKeyNotFoundError | PayloadDecryptionError | MalformedEncryptedPayloadError | undefined {
  if (message.includes(MALFORMED)) return new MalformedEncryptedPayloadError(MALFORMED);
  const quoted = String.raw`"((?:[^"\\]|\\.)*)"`;
  const unknown = new RegExp(
    String.raw`The worker could not decrypt what this client sent: it was encrypted with the key id ${quoted}, which is not among the worker's keys \(([^)]*)\)`,
  ).exec(message);
  if (unknown) {
    const ids = [...unknown[2]!.matchAll(new RegExp(quoted, 'g'))].map(
      (match) => JSON.parse(`"${match[1]}"`) as string,
    );
    return new EncryptionKeyNotFoundError(JSON.parse(`"${unknown[1]}"`) as string, ids, 'worker');
  }
  const wrong = new RegExp(
    String.raw`The worker could not decrypt what this client sent: it was encrypted with the key id ${quoted}, but the worker's key under that id`,
  ).exec(message);
  if (wrong) return new PayloadDecryptionError(JSON.parse(`"${wrong[1]}"`) as string, undefined, 'worker');
  return undefined;
}
