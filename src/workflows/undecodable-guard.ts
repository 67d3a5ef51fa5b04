import { ApplicationFailure, log, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import { firstUndecodable, refusalError, type Undecodable } from '../shared/undecodable.js';
import { FailureType } from '../shared/errors.js';

/**
 * The patch id recorded for the `n`th signal of a run (counting from 1) that was dropped because the worker could not
 * decrypt it. One per dropped signal: replay reads the drop from history rather than from the codec, which may decrypt
 * the signal by then (its key was given to the worker later).
 */
export const droppedSignalPatchId = (ordinal: number) => `durable-agent-dropped-undecodable-signal-${ordinal}`;

/**
 * A run's `setHandler` that refuses what a client sent that the worker could not decrypt (the {@link Undecodable}
 * markers of src/codec/worker-codec.ts), so that one client with the wrong key cannot wedge a conversation for everyone:
 *
 * - an update is rejected by validation (every update gets a validator): no history event; the caller gets an
 *   UndecodablePayload failure whose message says which key id and what to do, readable whatever its keys
 *   (src/codec/failure-converter.cjs);
 * - a query fails with that message;
 * - a signal is dropped with a logged warning, and the drop is recorded as a patch marker ({@link droppedSignalPatchId}).
 *
 * Part of the workflow code, not a workflow interceptor, so that every bundle of it (a replay from `workflowsPath`
 * too) reads the recorded drops. Nothing changes for a message that decrypts, and no command is added then: replay of
 * earlier histories is untouched. Create one per run: it counts the run's signals.
 */
export function refusingUndecodable(): typeof setHandler {
  let signals = 0;
  const guarded = (definition: { type: string; name: string }, handler: unknown, options?: HandlerOptions) => {
    if (typeof handler !== 'function') return setHandler(definition as never, handler as never, options as never);
    const run = handler as (...args: unknown[]) => unknown;
    if (definition.type === 'signal') {
      const signal = (...args: unknown[]) => (dropped(definition.name, ++signals, args) ? undefined : run(...args));
      return setHandler(definition as never, signal as never, options as never);
    }
    if (definition.type === 'update') {
      const validate = options?.validator;
      const validator = (...args: unknown[]) => {
        const marker = firstUndecodable(args);
        if (marker !== undefined) throw refusal(marker);
        validate?.(...args);
      };
      const update = (...args: unknown[]) => {
        const marker = firstUndecodable(args);
        if (marker === undefined) return run(...args);
        // Validated live, so only replay gets here: the update was accepted with its input decrypted, and the worker
        // lost the key since. Fail the workflow task until it has it again, as for a result the worker wrote.
        throw new Error(`The ${definition.name} update was accepted, but now: ${refusalError(marker).message}`);
      };
      return setHandler(definition as never, update as never, { ...options, validator } as never);
    }
    const query = (...args: unknown[]) => {
      const marker = firstUndecodable(args);
      if (marker !== undefined) throw refusal(marker);
      return run(...args);
    };
    return setHandler(definition as never, query as never, options as never);
  };
  return guarded;
}

interface HandlerOptions {
  validator?: (...args: unknown[]) => void;
  description?: string;
}

/** Whether the `ordinal`th signal of the run is dropped: it does not decrypt now, or it did not when it came. */
function dropped(signal: string, ordinal: number, args: unknown[]): boolean {
  const marker = firstUndecodable(args);
  const patchId = droppedSignalPatchId(ordinal);
  if (marker === undefined) {
    // A signal dropped when it came stays dropped on replay, even if the worker can decrypt it now.
    return workflowInfo().unsafe.isReplaying && patched(patchId);
  }
  // Outside replay `patched` records the drop and answers true. In replay it answers from history: false means this
  // signal was decrypted and handled when it came, so the worker lost the key since: wait for it, as for a result.
  if (!patched(patchId)) throw new Error(`The ${signal} signal was handled when it came, but now: ${message(marker)}`);
  log.warn('dropped a signal the worker could not decrypt', {
    signal,
    keyId: marker.undecodable.keyId,
    reason: marker.undecodable.reason,
    error: message(marker),
  });
  return true;
}

/** A run cannot start without its input: a plain Error fails the workflow task, which Temporal retries. */
export function refuseUndecodableInput(input: unknown): void {
  const marker = firstUndecodable([input]);
  if (marker !== undefined) throw new Error(`This run cannot start: ${message(marker)}`);
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
