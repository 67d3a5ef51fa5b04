import {
  defaultPayloadConverter,
  type Payload,
  type PayloadCodec,
  type SerializationContext,
} from '@temporalio/common';
import { EncryptionCodec } from './encryption-codec.js';
import type { EncryptionKey } from './keys.js';
import { undecodableFrom } from '../shared/undecodable.js';

/**
 * The worker's codec: {@link EncryptionCodec}, except that a payload of the workflow's own context that it cannot
 * decrypt becomes an {@link Undecodable} marker instead of an error.
 *
 * Temporal decodes a whole workflow activation before the workflow sees it, so one payload that fails to decode fails
 * the workflow task, and Temporal retries that task until it decodes. For what the worker wrote itself (activity
 * results, under the activity's context) that is right: the worker lost a key, and the run waits until the operator
 * gives it back. For what a client sent (signal, update and query arguments, under the workflow's context) it wedged
 * the conversation for every client because one client had the wrong key: the marker lets the workflow refuse that
 * one message (src/workflows/undecodable-guard.ts). A run's start input has the workflow's context too, and a
 * run cannot start without it: the workflow fails the workflow task for it, as before.
 */
export class WorkerPayloadCodec implements PayloadCodec {
  private readonly codec: EncryptionCodec;
  private readonly keyIds: string[];

  constructor(keys: readonly EncryptionKey[]) {
    this.codec = new EncryptionCodec(keys);
    this.keyIds = keys.map((key) => key.id);
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return await this.codec.encode(payloads);
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    if (context?.type !== 'workflow') return await this.codec.decode(payloads);
    return await Promise.all(payloads.map((payload) => this.decodeOrMark(payload)));
  }

  private async decodeOrMark(payload: Payload): Promise<Payload> {
    try {
      const [decoded] = await this.codec.decode([payload]);
      return decoded!;
    } catch (error) {
      const marker = undecodableFrom(error, this.keyIds);
      if (marker === undefined) throw error;
      return defaultPayloadConverter.toPayload(marker);
    }
  }
}
