import { createRequire } from 'node:module';
import { ApplicationFailure, defaultPayloadConverter, type FailureConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { encryptionDataConverter } from '../../src/codec/data-converter.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { EncryptionKeyNotFoundError, PayloadDecryptionError } from '../../src/shared/encryption-errors.js';
import { isUndecodable, refusalError, refusalFromMessage, type Undecodable } from '../../src/shared/undecodable.js';
import { WorkerPayloadCodec } from '../../src/codec/worker-codec.js';
import { FailureType } from '../../src/shared/errors.js';
import { newKey } from './keys.js';

/**
 * The worker's codec hands the workflow a marker for a client's payload it cannot decrypt (signal, update and query
 * arguments: the workflow's context), and keeps failing on its own payloads (activity results: the activity's context).
 */

const workerKey = newKey('worker');
const workflow = { type: 'workflow', namespace: 'default', workflowId: 'conversation-x' } as const;
const activity = { type: 'activity', namespace: 'default', workflowId: 'conversation-x', isLocal: false } as const;
const codec = new WorkerPayloadCodec([workerKey]);

const encryptedWith = async (key = workerKey, value: unknown = { content: 'hello' }) =>
  (await new EncryptionCodec([key]).encode([defaultPayloadConverter.toPayload(value)]))[0]!;
const valueOf = (payload: Parameters<typeof defaultPayloadConverter.fromPayload>[0]) =>
  defaultPayloadConverter.fromPayload(payload);

describe('the worker codec', () => {
  it("decrypts the worker's own payloads in every context", async () => {
    for (const context of [workflow, activity, undefined]) {
      const [decoded] = await codec.decode([await encryptedWith()], context);
      expect(valueOf(decoded!)).toEqual({ content: 'hello' });
    }
  });

  it("marks a client's payload under another key id, or another key under the same id, in the workflow's context", async () => {
    const [otherId, otherKey, own] = await codec.decode(
      [await encryptedWith(newKey('client')), await encryptedWith(newKey('worker')), await encryptedWith()],
      workflow,
    );
    expect(valueOf(otherId!)).toEqual({
      undecodable: { keyId: 'client', reason: 'unknown-key', workerKeyIds: ['worker'] },
    });
    expect(valueOf(otherKey!)).toEqual({
      undecodable: { keyId: 'worker', reason: 'wrong-key', workerKeyIds: ['worker'] },
    });
    // One undecodable payload does not take the others with it.
    expect(valueOf(own!)).toEqual({ content: 'hello' });
  });

  it("fails as before in an activity's context and without one: an activity result waits for the key", async () => {
    const foreign = await encryptedWith(newKey('client'));
    await expect(codec.decode([foreign], activity)).rejects.toBeInstanceOf(EncryptionKeyNotFoundError);
    await expect(codec.decode([foreign])).rejects.toBeInstanceOf(EncryptionKeyNotFoundError);
    await expect(codec.decode([await encryptedWith(newKey('worker'))], activity)).rejects.toBeInstanceOf(
      PayloadDecryptionError,
    );
  });

  it('a marker is recognised by its shape only', () => {
    expect(isUndecodable({ undecodable: { keyId: 'a', reason: 'wrong-key', workerKeyIds: [] } })).toBe(true);
    expect(isUndecodable({ undecodable: { keyId: 'a', reason: 'other', workerKeyIds: [] } })).toBe(false);
    expect(isUndecodable({ id: '1', content: 'hi', undecodable: {} })).toBe(false);
    expect(isUndecodable('undecodable')).toBe(false);
  });
});

describe("the worker's refusal", () => {
  const markers: Undecodable[] = [
    { undecodable: { keyId: 'client-2026', reason: 'unknown-key', workerKeyIds: ['worker', 'older'] } },
    { undecodable: { keyId: 'worker', reason: 'wrong-key', workerKeyIds: ['worker'] } },
  ];

  it.each(markers)(
    'names the key id and what to do, and reads back from its message alone ($undecodable.reason)',
    (marker) => {
      const refusal = refusalError(marker);
      expect(refusal.message).toContain(`"${marker.undecodable.keyId}"`);
      expect(refusal.message).toMatch(/Give this client the worker's keys \(DURABLE_AGENT_ENCRYPTION_KEYS/);
      const back = refusalFromMessage(`Query failed: ${refusal.message}`);
      expect(back).toBeInstanceOf(refusal.constructor);
      expect(back).toMatchObject({ keyId: marker.undecodable.keyId, side: 'worker', message: refusal.message });
      expect(refusalFromMessage('Encoded failure')).toBeUndefined();
    },
  );

  it('stays readable in the failure the worker sends, where every other failure is encoded', () => {
    const path = encryptionDataConverter([workerKey]).failureConverterPath!;
    const { failureConverter } = createRequire(import.meta.url)(path) as { failureConverter: FailureConverter };
    const message = refusalError(markers[0]!).message;
    const refusal = ApplicationFailure.create({ type: FailureType.UndecodablePayload, nonRetryable: true, message });
    expect(failureConverter.errorToFailure(refusal, defaultPayloadConverter)).toMatchObject({ message });
    const other = ApplicationFailure.create({ type: FailureType.InvalidMessage, message: 'quotes the user' });
    expect(failureConverter.errorToFailure(other, defaultPayloadConverter)).toMatchObject({
      message: 'Encoded failure',
    });
  });
});
