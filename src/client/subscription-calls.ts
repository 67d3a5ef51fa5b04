import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  type WorkflowHandle,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  WorkflowUpdateStage,
} from '@temporalio/client';
// @temporalio/proto is CommonJS: Node's ESM loader offers its exports on the default import only.
import proto from '@temporalio/proto';
import { pollEventsUpdate } from '../workflows/definitions.js';
import type { PollEventsRequest, PollEventsResult } from '../workflows/stream-events.js';

/**
 * How long the workflow may take to accept a poll. A poll that reaches a run in its last workflow task is refused
 * ("workflow is closing") and the SDK's default retries would hold it for 40 s; with this deadline it gives up within
 * about 2 s even on such a connection. A busy worker that takes longer just gets the same poll (same update id) again.
 */
export const POLL_ACCEPT_TIMEOUT_MS = 1_000;
/** Beyond the poll's own wait: how long waiting for its answer may take before the client gives up on it. */
const POLL_ANSWER_MARGIN_MS = 10_000;
/**
 * How long ending a subscription waits for its cancelled calls: a call the SDK's default retry interceptor is retrying
 * settles only at its next attempt, which for a refused poll comes at most 2.04 s after it was sent.
 */
export const SETTLE_MS = 2_500;

const { HistoryEventFilterType } = proto.temporal.api.enums.v1;

/** How a run closed, as its watch saw it: it continued as new (as `runId`), or it closed for another reason. */
export type RunClosed = { continuedAs: string } | { continuedAs?: undefined };

export interface RunWatch {
  /** Resolves when the run has closed (never rejects; a watch that fails resolves too, so the run is looked at again). */
  readonly closed: Promise<RunClosed>;
  /** How the run closed, if it does within `ms`. */
  within(ms: number): Promise<RunClosed | undefined>;
  stop(): void;
}

/**
 * The client calls of one subscription (`subscribe`): each one cancelled when the subscription ends, and awaited
 * then (within {@link SETTLE_MS}), so that whoever closes the connection next does not close it under a call.
 * @internal
 */
export class SubscriptionCalls {
  /** Aborted when the subscription ends. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    readonly client: Client,
    signal: AbortSignal | undefined,
  ) {
    this.signal = this.controller.signal;
    if (signal?.aborted) this.controller.abort();
    else signal?.addEventListener('abort', () => this.controller.abort(), { once: true });
  }

  /**
   * Run one client call that ends with the subscription, or earlier when `signal` aborts, or at `deadline`. The
   * Temporal connection adds an abort listener per call and never removes it, so each call gets a signal of its own
   * (collected with the call) rather than the subscription's long-lived one.
   */
  run<T>(call: () => Promise<T>, options: { deadline?: number; signal?: AbortSignal } = {}): Promise<T> {
    const signals = [this.signal, options.signal].filter((signal) => signal !== undefined);
    // Nothing is sent once the call is cancelled, and a cancelled call is let go at once: the connection cancels a
    // call only when its signal fires after the gRPC request was made, which a call that first encodes its input
    // makes a moment later (a long poll started so would run to its end, 30 s, and keep `chat` from exiting).
    const cancelled = () => new WorkflowUpdateRPCTimeoutOrCancelledError('Cancelled: the subscription ended');
    if (signals.some((signal) => signal.aborted)) return Promise.reject(cancelled());
    const own = new AbortController();
    let letGo!: (error: Error) => void;
    const aborted = new Promise<never>((_, reject) => (letGo = reject));
    const abort = () => {
      own.abort();
      letGo(cancelled());
    };
    for (const signal of signals) signal.addEventListener('abort', abort, { once: true });
    const { deadline } = options;
    const promise = this.client.withAbortSignal(own.signal, () =>
      deadline === undefined ? call() : this.client.withDeadline(deadline, call),
    );
    const settled = promise.then(
      () => undefined,
      () => undefined,
    );
    this.inFlight.add(settled);
    void settled.then(() => {
      this.inFlight.delete(settled);
      for (const signal of signals) signal.removeEventListener('abort', abort);
    });
    aborted.catch(() => undefined);
    return Promise.race([promise, aborted]);
  }

  /**
   * One `pollEvents` of a run, in two steps: the update is accepted (within {@link POLL_ACCEPT_TIMEOUT_MS}, asked
   * again with the same id while the worker is slow), then its answer is awaited. Ends early when `signal` aborts.
   */
  async pollEvents(
    handle: WorkflowHandle,
    request: PollEventsRequest,
    waitMs: number,
    signal: AbortSignal,
  ): Promise<PollEventsResult> {
    const updateId = randomUUID();
    for (;;) {
      let update;
      try {
        update = await this.run(
          () =>
            handle.startUpdate(pollEventsUpdate, {
              args: [request],
              updateId,
              waitForStage: WorkflowUpdateStage.ACCEPTED,
            }),
          { signal, deadline: Date.now() + POLL_ACCEPT_TIMEOUT_MS },
        );
      } catch (error) {
        const timedOut = error instanceof WorkflowUpdateRPCTimeoutOrCancelledError;
        if (timedOut && !signal.aborted && !this.signal.aborted) continue;
        throw error;
      }
      return await this.run(() => update.result(), {
        signal,
        deadline: Date.now() + waitMs + POLL_ANSWER_MARGIN_MS,
      });
    }
  }

  /**
   * Watch a run until it closes: a long poll of its history for the close event. Not `WorkflowHandle.result()`,
   * which a time-skipping test environment takes as leave to skip time while it waits.
   */
  watch(workflowId: string, runId: string): RunWatch {
    const stopped = new AbortController();
    let resolveClosed!: (closed: RunClosed) => void;
    const closed = new Promise<RunClosed>((resolve) => (resolveClosed = resolve));
    this.run(() => this.closeEvent(workflowId, runId), { signal: stopped.signal }).then(
      (event) => {
        const continuedAs = event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
        resolveClosed(continuedAs ? { continuedAs } : {});
      },
      () => {
        // The watch itself failed: the subscription looks at the run again.
        if (!stopped.signal.aborted && !this.signal.aborted) resolveClosed({});
      },
    );
    return {
      closed,
      stop: () => stopped.abort(),
      within: async (ms) => {
        const timer = new AbortController();
        const elapsed = sleep(ms, undefined, { signal: timer.signal }).then(
          () => undefined,
          () => undefined,
        );
        try {
          return await Promise.race([closed, elapsed]);
        } finally {
          timer.abort();
        }
      },
    };
  }

  /** The event that closed the run, once there is one (the server answers a long poll empty now and then). */
  private async closeEvent(workflowId: string, runId: string): Promise<proto.temporal.api.history.v1.IHistoryEvent> {
    const request: proto.temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryRequest = {
      namespace: this.client.options.namespace,
      execution: { workflowId, runId },
      skipArchival: true,
      waitNewEvent: true,
      historyEventFilterType: HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
    };
    for (;;) {
      const response = await this.client.workflowService.getWorkflowExecutionHistory(request);
      const event = response.history?.events?.[0];
      if (event) return event;
      request.nextPageToken = response.nextPageToken;
    }
  }

  /** Cancel every call and wait (within {@link SETTLE_MS}) for them to settle. */
  async close(): Promise<void> {
    this.controller.abort();
    if (this.inFlight.size === 0) return;
    const timer = new AbortController();
    const elapsed = sleep(SETTLE_MS, undefined, { signal: timer.signal }).catch(() => undefined);
    await Promise.race([Promise.all(this.inFlight), elapsed]);
    timer.abort();
  }
}
