import { QueryNotRegisteredError, type WorkflowClientInterceptor } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { refusalFromMessage } from '../shared/undecodable.js';
import { FailureType } from '../shared/errors.js';

/**
 * The worker's refusals of what this client sent but the worker could not decrypt (src/workflows/undecodable-guard.ts),
 * raised as the codec's named errors with `side: 'worker'`: `EncryptionKeyNotFoundError` (the worker
 * has no key under the id this client encrypted with) or `PayloadDecryptionError` (it has another key under that id),
 * whose messages say to give this client the worker's keys. Without this, an update's refusal is an ApplicationFailure
 * of type UndecodablePayload and a query's a `QueryNotRegisteredError`, which is all a failed query reaches a
 * TypeScript client as.
 */
export function keyRefusalInterceptor(): WorkflowClientInterceptor {
  return {
    async startUpdate(input, next) {
      const output = await next(input);
      throwIfRefused(output.outcome);
      return output;
    },
    async startUpdateWithStart(input, next) {
      const output = await next(input);
      throwIfRefused(output.updateOutcome);
      return output;
    },
    async query(input, next) {
      try {
        return await next(input);
      } catch (error) {
        const refusal = error instanceof QueryNotRegisteredError ? refusalFromMessage(error.message) : undefined;
        if (refusal === undefined) throw error;
        throw Object.assign(refusal, { cause: error });
      }
    },
  };
}

function throwIfRefused(outcome: temporal.api.update.v1.IOutcome | null | undefined): void {
  const failure = outcome?.failure;
  if (failure?.applicationFailureInfo?.type !== FailureType.UndecodablePayload) return;
  const refusal = refusalFromMessage(failure.message ?? '');
  if (refusal !== undefined) throw refusal;
}
