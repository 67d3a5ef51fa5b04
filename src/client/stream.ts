import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { isEncryptionKeyError } from '../shared/encryption-errors.js';
import { conversationWorkflowId, type ConversationOutcome } from '../workflows/definitions.js';
import {
  DEFAULT_POLL_WAIT_MS,
  MAX_POLL_WAIT_MS,
  StreamFailureType,
  type PollEventsResult,
  type StreamEvent,
} from '../workflows/stream-events.js';
import { SubscriptionCalls } from './subscription-calls.js';

export { AnswerText } from './answer-text.js';

export interface SubscribeOptions {
  /** Offset of the first event wanted; default the latest turn's start (a late subscriber sees the whole turn). */
  from?: number;
  /** Ends the iteration: the calls in flight are cancelled and awaited (see {@link subscribe}). */
  signal?: AbortSignal;
  /** How long one poll may wait in the workflow; default 30 s (`DEFAULT_POLL_WAIT_MS`). */
  waitMs?: number;
  /** Longest pause before looking again at a conversation that is closed idle (it may reopen) or missing; default 5 s. */
  maxRetryDelayMs?: number;
}

/** After a poll answered `closing`: how long to wait for the run to close before polling it again. */
const CLOSING_WAIT_MS = 2_000;

/**
 * The events of a conversation as they happen, from `from` on: long-polls the `pollEvents` update of its latest run,
 * follows continue-as-new (offsets keep growing), waits for a conversation that closed idle to reopen, and ends when
 * the conversation has ended (or failed) or `signal` aborts. One subscription costs one update in flight: share it
 * between viewers (as `durable-agent serve` does) rather than opening one per viewer.
 *
 * Each poll races a watch of its run's close, so the subscription takes the next run as soon as the run continues as
 * new, also when the poll reached the run in its last workflow task (Temporal refuses such an update with "workflow
 * is closing", which the Temporal client would otherwise retry for 40 s).
 *
 * Ending the iteration (`signal`, or `break`) cancels the calls in flight and waits for them to settle (at most
 * 2.5 s), so the connection can be closed right after. On a connection from `DurableAgentClient.connect` they settle
 * at once. The Temporal SDK's default retry interceptor keeps retrying a call after it is cancelled: with it, a call
 * to an unreachable cluster can outlive the iteration, and closing the connection under it makes its next retry throw
 * "Channel has been shut down".
 *
 * A `model_attempt_started` event with `attempt > 1` means the model call was retried: replace the text shown for
 * that round (see {@link AnswerText}).
 */
export async function* subscribe(
  client: Client,
  conversationId: string,
  options: SubscribeOptions = {},
): AsyncGenerator<StreamEvent> {
  const calls = new SubscriptionCalls(client, options.signal);
  try {
    yield* follow(calls, conversationId, options);
  } finally {
    await calls.close();
  }
}

async function* follow(
  calls: SubscriptionCalls,
  conversationId: string,
  options: SubscribeOptions,
): AsyncGenerator<StreamEvent> {
  const { client, signal } = calls;
  const workflowId = conversationWorkflowId(conversationId);
  const maxDelay = options.maxRetryDelayMs ?? 5_000;
  const waitMs = Math.min(options.waitMs ?? DEFAULT_POLL_WAIT_MS, MAX_POLL_WAIT_MS);
  let from = options.from;
  let delay = 100;
  const pause = async () => {
    await sleep(delay, undefined, { signal }).catch(() => undefined);
    delay = Math.min(delay * 2, maxDelay);
  };
  /** The run to poll next when it is known (the one a run continued as), so no `describe` is needed. */
  let next: string | undefined;

  while (!signal.aborted) {
    let runId: string;
    if (next !== undefined) {
      runId = next;
      next = undefined;
    } else {
      try {
        const description = await calls.run(() => client.workflow.getHandle(workflowId).describe());
        runId = description.runId;
        const status = description.status.name;
        if (status === 'COMPLETED') {
          const outcome = (await calls.run(() =>
            client.workflow.getHandle(workflowId, runId, { followRuns: false }).result(),
          )) as ConversationOutcome;
          // The run's last events, for a subscriber that was between two polls when it closed.
          for (const event of lastEvents(outcome, from)) {
            yield event;
            from = event.offset + 1;
          }
          if (outcome.closedBecause === 'ended') return;
          // Closed idle: the next message reopens it, with the same offsets.
          from ??= outcome.state.streamOffset ?? 0;
          await pause();
          continue;
        }
        if (status === 'CONTINUED_AS_NEW') {
          // A moment in between: the next run is about to exist.
          await pause();
          continue;
        }
        if (status !== 'RUNNING') return;
      } catch (error) {
        if (signal.aborted) return;
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        // Not started yet: the first message creates it.
        await pause();
        continue;
      }
    }

    // Follow this run until it closes: each poll races the watch of its close.
    const handle = client.workflow.getHandle(workflowId, runId);
    const watch = calls.watch(workflowId, runId);
    try {
      for (;;) {
        if (signal.aborted) return;
        const abandon = new AbortController();
        const poll = calls.pollEvents(handle, { from, waitMs: options.waitMs }, waitMs, abandon.signal);
        const outcome = await Promise.race([
          poll.then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          ),
          watch.closed.then((closed) => ({ closed })),
        ]);
        if ('closed' in outcome) {
          // The run closed while the poll was on its way or refused (it was in its last task): take the next run.
          abandon.abort();
          next = outcome.closed.continuedAs;
          break;
        }
        if ('error' in outcome) {
          if (signal.aborted) return;
          const { error } = outcome;
          if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
            if (error.cause.type === StreamFailureType.TooManySubscribers) throw error.cause;
          }
          // Keys that do not match the worker's do not mend by asking again.
          if (isEncryptionKeyError(error)) throw error;
          // The run closed under the poll, the connection failed, or the call timed out: look for the latest run.
          await pause();
          break;
        }
        const result: PollEventsResult = outcome.result;
        delay = 100;
        for (const event of result.events) yield event;
        from = result.next;
        if (result.closing) {
          // The run is about to close or continue as new: its successor takes over from `from`.
          const closed = await watch.within(CLOSING_WAIT_MS);
          if (closed) {
            next = closed.continuedAs;
            break;
          }
          // Still open (a message came while it was closing): poll it again.
        }
      }
    } finally {
      watch.stop();
    }
  }
}

/**
 * The events a closed run handed on that come at or after `from` (none for a subscriber without an offset). An ended
 * conversation hands on no events; its last one is the `turn_finished` of its last result, at the offset before the
 * next.
 */
function lastEvents(outcome: ConversationOutcome, from: number | undefined): StreamEvent[] {
  const { streamOffset, streamEvents, lastResult } = outcome.state;
  if (from === undefined || streamOffset === undefined || from >= streamOffset) return [];
  if (streamEvents?.length) return streamEvents.filter((event) => event.offset >= from);
  if (!lastResult || from > streamOffset - 1) return [];
  const { conversationId: _conversationId, ...finished } = lastResult;
  return [{ type: 'turn_finished', ...finished, offset: streamOffset - 1 }];
}
