import { condition, type setHandler } from '@temporalio/workflow';
import { expectedFailure } from '../shared/errors.js';
import { handlerDescriptions, pollEventsUpdate, streamSignal } from './definitions.js';
import {
  DEFAULT_POLL_WAIT_MS,
  type EventLog,
  MAX_POLL_WAIT_MS,
  MAX_WAITING_POLLS,
  type PollEventsRequest,
  type PollEventsResult,
  StreamFailureType,
} from './stream-events.js';

/**
 * The `pollEvents` long poll over a run's {@link EventLog}: answers as soon as there are events at or after `from`,
 * after the wait with none, or at once while the run closes. Plain, so unit tests run it without Temporal.
 */
export class EventPolls {
  /** Set while the run waits for its handlers before closing or continuing as new: polls answer at once. */
  closing = false;
  private waiting = 0;

  constructor(
    private readonly events: EventLog,
    private readonly conversationId: string,
  ) {}

  /** The update's validator: a well-formed request, and room for one more waiting poll. */
  validate(request: PollEventsRequest | undefined): void {
    const { from, waitMs } = request ?? {};
    if ((from !== undefined && !Number.isInteger(from)) || (waitMs !== undefined && !(waitMs >= 0))) {
      throw expectedFailure({
        type: StreamFailureType.InvalidPoll,
        nonRetryable: true,
        message: 'pollEvents takes { from?: integer offset, waitMs?: milliseconds >= 0 }.',
      });
    }
    if (this.waiting >= MAX_WAITING_POLLS) {
      throw expectedFailure({
        type: StreamFailureType.TooManySubscribers,
        nonRetryable: true,
        message:
          `Conversation ${this.conversationId} has ${this.waiting} event polls waiting already (Temporal allows 10 ` +
          'updates in flight per workflow): share one subscription per conversation, as the HTTP bridge does.',
      });
    }
  }

  /** `wait(ready, ms)` resolves once `ready` holds or after `ms` (the workflow passes Temporal's `condition`). */
  async poll(
    request: PollEventsRequest | undefined,
    wait: (ready: () => boolean, timeoutMs: number) => Promise<unknown>,
  ): Promise<PollEventsResult> {
    const { start, truncated } = this.events.resolve(request?.from);
    const waitMs = Math.min(request?.waitMs ?? DEFAULT_POLL_WAIT_MS, MAX_POLL_WAIT_MS);
    if (!this.events.hasFrom(start) && !this.closing && waitMs > 0) {
      this.waiting++;
      try {
        await wait(() => this.events.hasFrom(start) || this.closing, waitMs);
      } finally {
        this.waiting--;
      }
    }
    return { ...this.events.read(start), truncated, closing: this.closing };
  }
}

/**
 * Serve a run's event stream: the text batches the model activity signals go into `events`, and subscribers
 * long-poll with the `pollEvents` update. Returns the polls, so the run can answer them at once while it closes.
 */
export function handleEventStream(
  events: EventLog,
  conversationId: string,
  /** The run's `setHandler` (./undecodable-guard.ts). */
  on: typeof setHandler,
): EventPolls {
  const polls = new EventPolls(events, conversationId);
  on(
    streamSignal,
    (batch) => {
      events.acceptBatch(batch);
    },
    { description: handlerDescriptions.stream },
  );
  on(pollEventsUpdate, (request) => polls.poll(request, (ready, timeoutMs) => condition(ready, timeoutMs)), {
    validator: (request: PollEventsRequest | undefined) => polls.validate(request),
    description: handlerDescriptions.pollEvents,
  });
  return polls;
}
