import { setTimeout as sleep } from 'node:timers/promises';
import { type Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { conversationWorkflowId, pollEventsUpdate, type ConversationOutcome } from '../workflows/definitions.js';
import { StreamFailureType, type StreamEvent } from '../workflows/stream-events.js';

export interface SubscribeOptions {
  /** Offset of the first event wanted; default the latest turn's start (a late subscriber sees the whole turn). */
  from?: number;
  /** Ends the iteration (the poll in flight is abandoned; the workflow answers it within `waitMs`). */
  signal?: AbortSignal;
  /** How long one poll may wait in the workflow; default 30 s (`DEFAULT_POLL_WAIT_MS`). */
  waitMs?: number;
  /** Longest pause before looking again at a conversation that is closed idle (it may reopen) or missing; default 5 s. */
  maxRetryDelayMs?: number;
}

/**
 * The events of a conversation as they happen, from `from` on: long-polls the `pollEvents` update of its latest run,
 * follows continue-as-new (offsets keep growing), waits for a conversation that closed idle to reopen, and ends when
 * the conversation has ended (or failed) or `signal` aborts. One subscription costs one update in flight: share it
 * between viewers (as `durable-agent serve` does) rather than opening one per viewer.
 *
 * A `model_attempt_started` event with `attempt > 1` means the model call was retried: replace the text shown for
 * that round (see {@link AnswerText}).
 */
export async function* subscribe(
  client: Client,
  conversationId: string,
  options: SubscribeOptions = {},
): AsyncGenerator<StreamEvent> {
  const { signal } = options;
  const workflowId = conversationWorkflowId(conversationId);
  const maxDelay = options.maxRetryDelayMs ?? 5_000;
  let from = options.from;
  let delay = 100;
  const pause = async () => {
    try {
      await sleep(delay, undefined, { signal });
    } catch {
      // Aborted: the loop ends.
    }
    delay = Math.min(delay * 2, maxDelay);
  };

  while (!signal?.aborted) {
    let runId: string;
    try {
      const description = await withSignal(client, signal, () => client.workflow.getHandle(workflowId).describe());
      runId = description.runId;
      const status = description.status.name;
      if (status !== 'RUNNING') {
        if (status !== 'COMPLETED' && status !== 'CONTINUED_AS_NEW') return;
        if (status === 'COMPLETED') {
          const outcome = (await withSignal(client, signal, () =>
            client.workflow.getHandle(workflowId, runId, { followRuns: false }).result(),
          )) as ConversationOutcome;
          if (outcome.closedBecause === 'ended') return;
          // Closed idle: the next message reopens it, with the same offsets.
          from ??= outcome.state.streamOffset;
        }
        await pause();
        continue;
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      // Not started yet: the first message creates it.
      await pause();
      continue;
    }

    const handle = client.workflow.getHandle(workflowId, runId);
    for (;;) {
      if (signal?.aborted) return;
      let result;
      try {
        result = await withSignal(client, signal, () =>
          handle.executeUpdate(pollEventsUpdate, { args: [{ from, waitMs: options.waitMs }] }),
        );
      } catch (error) {
        if (signal?.aborted) return;
        if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
          if (error.cause.type === StreamFailureType.TooManySubscribers) throw error.cause;
        }
        // The run closed or continued as new under us, or the connection failed: look for the latest run again.
        await pause();
        break;
      }
      delay = 100;
      for (const event of result.events) yield event;
      from = result.next;
      if (result.closing) {
        // The run is about to close or continue as new; its successor takes over from `from`.
        await pause();
        break;
      }
    }
  }
}

/**
 * Run one client call that `signal` aborts. The Temporal connection adds an abort listener per call and never removes
 * it, so each call gets a signal of its own (collected with the call) rather than the subscription's long-lived one.
 */
async function withSignal<T>(client: Client, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
  if (!signal) return call();
  const own = new AbortController();
  const abort = () => own.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  try {
    return await client.withAbortSignal(own.signal, call);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/**
 * The answer's text as a consumer shows it, applying the stream's rule: the text of a round is what its latest attempt
 * wrote; a retried model call (a new attempt) replaces that round's partial text rather than appending to it.
 */
export class AnswerText {
  private readonly rounds = new Map<string, { attempt: number; text: string }>();

  /**
   * Apply one event. Returns what changed: `append` (add `text` to what is shown for the round) or `replace` (show
   * `text` instead of the round's text so far); `undefined` when the event does not change any text.
   */
  apply(event: StreamEvent): { change: 'append' | 'replace'; turn: number; round: number; text: string } | undefined {
    if (event.type !== 'model_attempt_started' && event.type !== 'text_delta') return undefined;
    const key = `${event.turn}/${event.round}`;
    const current = this.rounds.get(key);
    if (current && event.attempt < current.attempt) return undefined;
    if (!current || event.attempt > current.attempt) {
      const hadText = current !== undefined && current.text !== '';
      const text = event.type === 'text_delta' ? event.text : '';
      this.rounds.set(key, { attempt: event.attempt, text });
      if (hadText) return { change: 'replace', turn: event.turn, round: event.round, text };
      return text === '' ? undefined : { change: 'append', turn: event.turn, round: event.round, text };
    }
    if (event.type !== 'text_delta') return undefined;
    current.text += event.text;
    return { change: 'append', turn: event.turn, round: event.round, text: event.text };
  }

  /** The text of one round (its latest attempt). */
  round(turn: number, round: number): string {
    return this.rounds.get(`${turn}/${round}`)?.text ?? '';
  }

  /** All text of a turn, its rounds in order. */
  turn(turn: number): string {
    return [...this.rounds.entries()]
      .filter(([key]) => key.startsWith(`${turn}/`))
      .sort(([a], [b]) => Number(a.split('/')[1]) - Number(b.split('/')[1]))
      .map(([, value]) => value.text)
      .join('');
  }
}
