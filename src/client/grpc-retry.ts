import {
  defaultGrpcRetryOptions,
  isGrpcServiceError,
  makeGrpcRetryInterceptor,
  type ConnectionOptions,
} from '@temporalio/client';
import { causeChain, errorMessage } from '../shared/errors.js';

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];
type NextCall = Parameters<Interceptor>[1];
type Call = ReturnType<NextCall>;
type Status = Parameters<ReturnType<typeof defaultGrpcRetryOptions>['retryableDecider']>[1];

/** gRPC status codes used here (from @grpc/grpc-js, which the Temporal client depends on). */
const GrpcStatus = { CANCELLED: 1, RESOURCE_EXHAUSTED: 8, UNAVAILABLE: 14 } as const;

/** Longest pause between two attempts, so that a call cancelled between two attempts settles within it. */
export const MAX_RETRY_DELAY_MS = 500;
/** Attempts per call: about 20 s of retries, as the SDK's default (10 attempts up to 5 s apart), in shorter steps. */
export const MAX_ATTEMPTS = 40;
/** Pause before sending again an update that reached a run in its last workflow task (the next run takes it). */
export const CLOSING_RETRY_DELAY_MS = 100;

/**
 * The Temporal client's retries of failed gRPC calls (UNAVAILABLE, RESOURCE_EXHAUSTED...), as the SDK's default
 * interceptor makes them, with three differences:
 *
 * - A cancelled call (an aborted `withAbortSignal`) stops retrying: the SDK's interceptor cancels only the first
 *   attempt and keeps sending the request again for up to 40 s, so an aborted call neither settles nor lets go.
 * - A call made under a signal that is already aborted is not sent: the connection cancels a call only when its signal
 *   fires after the call was made, so such a call would run to its end (a 30 s long poll kept `chat` from exiting).
 *   `abortSignal` reads the signal of the call being made (the connection's call context).
 * - An attempt due after the connection was closed fails the call instead of throwing "Channel has been shut down"
 *   from a timer (an uncaught exception that killed the CLI at exit).
 * - An update refused because its run is closing ("workflow is closing", RESOURCE_EXHAUSTED) is sent again after
 *   {@link CLOSING_RETRY_DELAY_MS}, not after the 1.7 s and up of RESOURCE_EXHAUSTED: the next run takes it at once.
 *
 * Pauses are capped at {@link MAX_RETRY_DELAY_MS}, so a call cancelled between two attempts settles within half a
 * second.
 * @internal
 */
export function cancellableRetryInterceptor(abortSignal: () => AbortSignal | undefined = () => undefined): Interceptor {
  const defaults = defaultGrpcRetryOptions({ maxAttempts: MAX_ATTEMPTS });
  const retry = makeGrpcRetryInterceptor({
    retryableDecider: (attempt, status) => defaults.retryableDecider(attempt, status),
    delayFunction: (attempt, status) =>
      isWorkflowClosing(status)
        ? CLOSING_RETRY_DELAY_MS
        : Math.min(MAX_RETRY_DELAY_MS, defaults.delayFunction(attempt, status)),
  });
  return (options, nextCall) => {
    // The SDK's interceptor creates every attempt through `nextCall`, and cancels only the first one it created.
    let attempts = 0;
    let cancelled = false;
    let latest: Call | undefined;
    const attempt: NextCall = (attemptOptions) => {
      attempts++;
      if (attempts === 1 && abortSignal()?.aborted) cancelled = true;
      if (cancelled) return refusedAttempt(GrpcStatus.CANCELLED, 'Cancelled on client');
      let call: Call;
      try {
        call = nextCall(attemptOptions);
      } catch (error) {
        // The first attempt throws to the caller as it always did; a later one runs in a timer, where it must not.
        // CANCELLED, not UNAVAILABLE: a closed connection is not worth another attempt.
        if (attempts === 1) throw error;
        return refusedAttempt(GrpcStatus.CANCELLED, `Not sent again: ${errorMessage(error)}`);
      }
      latest = call;
      if (attempts > 1) return call;
      return onCancel(call, (status, details) => {
        cancelled = true;
        if (latest !== call) latest?.cancelWithStatus(status, details);
      });
    };
    return retry(options, attempt);
  };
}

/** Temporal's answer to an update that reached a run in its last workflow task. */
export function isWorkflowClosing(status: Pick<Status, 'code' | 'details'>): boolean {
  return Number(status.code) === GrpcStatus.RESOURCE_EXHAUSTED && /workflow is closing/i.test(status.details);
}

/**
 * Temporal's RESOURCE_EXHAUSTED (gRPC 8) anywhere in `error`'s causes: a limit of the moment, such as the updates in
 * flight on one workflow or the queries one workflow holds.
 */
export function isResourceExhausted(error: unknown): boolean {
  return [...causeChain(error)].some(
    (cause) =>
      (isGrpcServiceError(cause) && Number(cause.code) === GrpcStatus.RESOURCE_EXHAUSTED) ||
      (cause instanceof Error && /RESOURCE_EXHAUSTED|in-flight updates|concurrent in-flight/i.test(cause.message)),
  );
}

/**
 * Temporal's UNAVAILABLE (gRPC 14) anywhere in `error`'s causes: among others, what a workflow's admitted updates and
 * held queries get when the server drops its copy of the workflow (after any update-with-start it refused): "workflow
 * update was aborted", "buffered query cleared, please retry".
 */
export function isUnavailable(error: unknown): boolean {
  return [...causeChain(error)].some(
    (cause) => isGrpcServiceError(cause) && Number(cause.code) === GrpcStatus.UNAVAILABLE,
  );
}

/** `call`, with `hook` run before a cancellation reaches it. */
function onCancel(call: Call, hook: (status: number, details: string) => void): Call {
  return new Proxy(call, {
    get(target, property, receiver) {
      if (property === 'cancelWithStatus') {
        return (status: number, details: string) => {
          hook(status, details);
          target.cancelWithStatus(status, details);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * An attempt that is not sent: it reports `code` as a real call that failed would (a message-less answer, then the
 * status), after the caller has finished setting it up. The retry interceptor only starts it, sends and half-closes.
 */
function refusedAttempt(code: number, details: string): Call {
  const call = {
    start(
      metadata: Status['metadata'],
      listener?: { onReceiveMessage?(message: unknown): void; onReceiveStatus?(status: Status): void },
    ) {
      setImmediate(() => {
        listener?.onReceiveMessage?.(null);
        listener?.onReceiveStatus?.({ code, details, metadata });
      });
    },
    sendMessage: () => undefined,
    sendMessageWithContext: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    cancelWithStatus: () => undefined,
    getPeer: () => '',
  };
  return call as unknown as Call;
}
