import {
  ApplicationFailure,
  log,
  patched,
  workflowInfo,
  type Next,
  type QueryInput,
  type SignalInput,
  type UpdateInput,
  type WorkflowExecuteInput,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { firstUndecodable, refusalError, type Undecodable } from '../codec/undecodable.js';
import { FailureType } from '../shared/errors.js';

/**
 * The patch id recorded for the `n`th signal of a run (counting from 1) that was dropped because the worker could not
 * decrypt it. One per dropped signal: replay reads the drop from history rather than from the codec, which may decrypt
 * the signal by then (its key was given to the worker later).
 */
export const droppedSignalPatchId = (ordinal: number) => `durable-agent-dropped-undecodable-signal-${ordinal}`;

/**
 * Refuses what a client sent that the worker could not decrypt (the {@link Undecodable} markers of
 * src/codec/worker-codec.ts), so that one client with the wrong key cannot wedge a conversation for everyone:
 *
 * - an update is rejected by validation: no history event; the caller gets an UndecodablePayload failure whose message
 *   says which key id and what to do (readable whatever its keys: src/codec/failure-converter.cjs);
 * - a query fails with that message;
 * - a signal is dropped with a logged warning, and the drop is recorded as a patch marker (see
 *   {@link droppedSignalPatchId});
 * - a run's start input cannot be dropped: the workflow task fails, as it did before, until the worker has the key.
 *
 * Nothing changes for a message that decrypts, and no command is added then: replay of earlier histories is untouched.
 */
class UndecodableMessages implements WorkflowInboundCallsInterceptor {
  private signals = 0;

  async execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    const marker = firstUndecodable(input.args);
    // A plain Error fails the workflow task (Temporal retries it), where an ApplicationFailure would fail the run.
    if (marker !== undefined) throw new Error(`This run cannot start: ${refusalError(marker).message}`);
    return await next(input);
  }

  async handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>): Promise<void> {
    const ordinal = ++this.signals;
    const marker = firstUndecodable(input.args);
    const patchId = droppedSignalPatchId(ordinal);
    const { isReplaying } = workflowInfo().unsafe;
    if (marker !== undefined) {
      // Outside replay `patched` records the drop and answers true. In replay it answers from history: false means this
      // signal was decrypted and handled when it came, so the worker lost the key since: wait for it, as for a result.
      if (!patched(patchId)) {
        throw new Error(`The ${input.signalName} signal was handled when it came, but now: ${message(marker)}`);
      }
      log.warn('dropped a signal the worker could not decrypt', {
        signal: input.signalName,
        keyId: marker.undecodable.keyId,
        reason: marker.undecodable.reason,
        error: message(marker),
      });
      return;
    }
    // A signal dropped when it came stays dropped on replay, even if the worker can decrypt it now.
    if (isReplaying && patched(patchId)) return;
    await next(input);
  }

  validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>): void {
    const marker = firstUndecodable(input.args);
    if (marker !== undefined) throw refusal(marker);
    next(input);
  }

  async handleUpdate(
    input: UpdateInput,
    next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>,
  ): Promise<unknown> {
    const marker = firstUndecodable(input.args);
    if (marker === undefined) return await next(input);
    // Only an update without a validator gets here live; in replay the update was accepted with its input decrypted,
    // so the worker lost the key since: fail the workflow task until it has it again.
    if (workflowInfo().unsafe.isReplaying)
      throw new Error(`The ${input.name} update was accepted, but now: ${message(marker)}`);
    throw refusal(marker);
  }

  async handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>): Promise<unknown> {
    const marker = firstUndecodable(input.args);
    if (marker !== undefined) throw refusal(marker);
    return await next(input);
  }
}

function message(marker: Undecodable): string {
  return refusalError(marker).message;
}

function refusal(marker: Undecodable): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.UndecodablePayload,
    nonRetryable: true,
    message: message(marker),
  });
}

export const interceptors: WorkflowInterceptorsFactory = () => ({ inbound: [new UndecodableMessages()] });
