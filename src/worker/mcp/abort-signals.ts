/** How a tool call's abort signal (the activity's cancellation) reaches the waits and the request of the call. */

/** `promise`, or the signal's reason as soon as it aborts (the work behind `promise` goes on for other callers). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * A signal for one request that follows the caller's. The SDK never removes the abort listener it adds to a request's
 * signal, so handing it a long-lived signal (one per worker, say) would pile up a listener per call.
 */
export function linkSignal(signal: AbortSignal | undefined): { signal: AbortSignal | undefined; release: () => void } {
  if (signal === undefined) return { signal: undefined, release: () => undefined };
  const controller = new AbortController();
  const abort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', abort, { once: true });
  return { signal: controller.signal, release: () => signal.removeEventListener('abort', abort) };
}
