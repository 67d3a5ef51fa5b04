import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { errorMessage } from '../shared/errors.js';

export interface WaitForFrontendOptions {
  /** Give up after this long; default 60 s. */
  timeoutMs?: number;
  /** Time between attempts; default 200 ms. */
  intervalMs?: number;
  /** Stop waiting early, e.g. when the server process exits; default never. */
  signal?: AbortSignal;
}

/** How long one GetSystemInfo attempt may take. */
const ATTEMPT_TIMEOUT_MS = 5_000;
/** gRPC's UNIMPLEMENTED: an old server without GetSystemInfo still answered (the SDK's own connect accepts it). */
const UNIMPLEMENTED = 12;
/** gRPC's DEADLINE_EXCEEDED. */
const DEADLINE_EXCEEDED = 4;

/**
 * Resolves once the Temporal frontend at `address` answers GetSystemInfo, the call a worker makes first. An open port
 * is not enough: for a moment after it opens, the frontend answers `Frontend is not healthy yet` (UNAVAILABLE), and a
 * worker that connects then fails to start. Retries every `intervalMs` until `timeoutMs` has passed, then rejects with
 * the last answer; rejects at once when `signal` aborts.
 */
export async function waitForFrontend(address: string, options: WaitForFrontendOptions = {}): Promise<void> {
  const { timeoutMs = 60_000, intervalMs = 200, signal } = options;
  const deadline = Date.now() + timeoutMs;
  // No retry interceptor: this loop is the retry, bounded by the deadline.
  const connection = Connection.lazy({ address, interceptors: [] });
  // What the frontend last answered, for the message when the deadline passes.
  let lastAnswer: unknown;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const attemptDeadline = Math.min(deadline, Date.now() + ATTEMPT_TIMEOUT_MS);
      try {
        await connection.withDeadline(attemptDeadline, () => connection.workflowService.getSystemInfo({}));
        return;
      } catch (error) {
        const { code } = error as { code?: unknown };
        if (code === UNIMPLEMENTED) return;
        // An attempt cut short by the overall deadline (the last one may have milliseconds) says nothing of the
        // frontend: the answer before it does.
        const cutShort = code === DEADLINE_EXCEEDED && attemptDeadline === deadline;
        if (!cutShort || lastAnswer === undefined) lastAnswer = error;
        if (Date.now() + intervalMs >= deadline) {
          throw new Error(
            `The Temporal frontend at ${address} did not answer within ${timeoutMs / 1000} s: ${errorMessage(lastAnswer)}`,
            { cause: lastAnswer },
          );
        }
      }
      await sleep(intervalMs, undefined, { signal });
    }
  } finally {
    await connection.close();
  }
}
