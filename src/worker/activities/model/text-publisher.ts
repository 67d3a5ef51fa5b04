import type { StreamBatch } from '../../../workflows/stream-events.js';
import { errorMessage } from '../../../shared/errors.js';
import type { Redactor } from '../../../shared/redaction.js';

/** The run a model call streams to. */
export interface StreamTarget {
  workflowId: string;
  runId: string;
}

/** Delivers one batch to the workflow (by default a signal to its run). */
export type StreamPublisher = (target: StreamTarget, batch: StreamBatch) => Promise<void>;

/** Least time between the first two batches; the first batch goes at once (time to first token). */
export const DEFAULT_STREAM_INTERVAL_MS = 250;
/** Each batch after the first waits this much longer than the one before, up to {@link MAX_STREAM_INTERVAL_MS}. */
export const STREAM_INTERVAL_STEP_MS = 50;
/**
 * The longest wait between two batches. A long answer ends up at one batch a second: every batch costs about 1.3 KB
 * of history (the signal, the subscriber's poll and their workflow tasks), which a second of text pays for.
 */
export const MAX_STREAM_INTERVAL_MS = 1_000;
/** A batch is sent early when its text reaches this many characters (a very fast model). */
export const MAX_BATCH_CHARS = 8_000;
/**
 * How long {@link TextPublisher.close} waits for batches still on their way. The answer must not wait for a signal
 * Temporal does not take (an outage): the attempt would outlive its heartbeat timeout and its finished result be lost.
 */
export const CLOSE_WAIT_MS = 2_000;

export interface TextPublisherOptions {
  publish: StreamPublisher;
  target: StreamTarget;
  /** The model call and attempt the text belongs to. */
  batch: Omit<StreamBatch, 'text'>;
  /** Wait between the first two batches; default {@link DEFAULT_STREAM_INTERVAL_MS}. */
  intervalMs?: number;
  /** Longest wait between two batches; default {@link MAX_STREAM_INTERVAL_MS}. */
  maxIntervalMs?: number;
  /** How long `close` waits for batches on their way; default {@link CLOSE_WAIT_MS}. */
  closeWaitMs?: number;
  log?: { warn(message: string, meta?: Record<string, unknown>): void };
  /**
   * The worker's secrets (src/shared/redaction.ts). The attempt's text is redacted as a whole and sent as it grows,
   * holding back a tail that may be the start of a secret, so a secret split across two pieces goes out redacted too
   * (what is held back comes with the result). Default: none.
   */
  redactor?: Redactor;
}

/**
 * Batches the text of one model-call attempt into signals: the first piece at once, then at most one batch per
 * interval (the text after the last batch comes with the activity's result), the interval growing from 250 ms to 1 s as the answer goes on, so history grows with batches, not
 * tokens, and a long answer costs a bounded multiple of its text. Batches are sent one after another, in order. Streaming is a
 * courtesy: a batch that cannot be delivered is logged and the rest are dropped, never failing the model call.
 */
export class TextPublisher {
  private readonly intervalMs: number;
  private readonly maxIntervalMs: number;
  private readonly closeWaitMs: number;
  private buffer = '';
  /** With a redactor: the attempt's text so far, and how much of its redacted form has been taken for batches. */
  private whole = '';
  private taken = 0;
  private batches = 0;
  private lastSentAt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> = Promise.resolve();
  private stopped = false;
  /** Set when `close` stopped waiting: batches queued behind a slow one are not sent (they would come late). */
  private dropQueued = false;

  constructor(private readonly options: TextPublisherOptions) {
    this.intervalMs = options.intervalMs ?? DEFAULT_STREAM_INTERVAL_MS;
    this.maxIntervalMs = Math.max(this.intervalMs, options.maxIntervalMs ?? MAX_STREAM_INTERVAL_MS);
    this.closeWaitMs = options.closeWaitMs ?? CLOSE_WAIT_MS;
  }

  /** How long to wait after the last batch before the next. */
  private interval(): number {
    return Math.min(this.maxIntervalMs, this.intervalMs + STREAM_INTERVAL_STEP_MS * Math.max(0, this.batches - 1));
  }

  /** Send an empty batch now: subscribers learn that this attempt started (a retry replaces earlier text). */
  announce(): void {
    this.send(true);
  }

  add(text: string): void {
    if (this.stopped || text === '') return;
    this.buffer += text;
    const wait = this.batches > 0 ? this.lastSentAt + this.interval() - Date.now() : 0;
    if (wait <= 0 || this.buffer.length >= MAX_BATCH_CHARS) this.send();
    else this.timer ??= setTimeout(() => this.send(), wait);
  }

  /**
   * The call is done: wait until every batch already queued was delivered (so all of them precede the activity's
   * result). Text still buffered is not sent: the workflow appends whatever of the answer its subscribers have not
   * seen when the result arrives, which saves a signal and a workflow task per answer. Batches not delivered within
   * `closeWaitMs` are given up (the queued ones are not sent; one on its way may still arrive, late, and the workflow
   * drops it): the answer carries their text, and the result must not wait for a signal Temporal does not take.
   */
  async close(): Promise<void> {
    this.stop();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const delivered = await Promise.race([
      this.sending.then(() => true),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.closeWaitMs))),
    ]);
    clearTimeout(timer);
    if (delivered) return;
    this.dropQueued = true;
    this.options.log?.warn('streamed text not delivered in time; the rest of this answer comes with its result', {
      waitedMs: this.closeWaitMs,
      ...this.options.target,
    });
  }

  /** The attempt failed: its remaining text would be replaced by the retry's anyway. */
  abandon(): void {
    this.buffer = '';
    this.stop();
  }

  private stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The buffered text to send now: all of it, or with a redactor what of its redacted form may go out. */
  private take(): string {
    const text = this.buffer;
    this.buffer = '';
    const { redactor } = this.options;
    if (redactor === undefined) return text;
    this.whole += text;
    const redacted = redactor.text(this.whole);
    const end = Math.max(this.taken, redactor.releasable(redacted));
    const batch = redacted.slice(this.taken, end);
    this.taken = end;
    return batch;
  }

  /** Queue a batch of whatever text is buffered when the previous batch is out; `empty` sends even without text. */
  private send(empty = false): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // The announcement does not count: the attempt's first text still goes at once.
    if (!empty) this.batches++;
    this.lastSentAt = Date.now();
    // The text is taken when the previous batch is out, so batches queued behind a slow signal coalesce (and a batch
    // whose text an earlier one took is not sent at all).
    this.sending = this.sending.then(async () => {
      if (this.dropQueued) return;
      const text = this.take();
      if (text === '' && !empty) return;
      try {
        await this.options.publish(this.options.target, { ...this.options.batch, text });
      } catch (error) {
        // After `close` gave up on it, the answer has gone with the result and was logged then.
        if (this.dropQueued) return;
        this.options.log?.warn('could not publish streamed text; the rest of this answer is not streamed', {
          error: errorMessage(error),
          ...this.options.target,
        });
        this.abandon();
      }
    });
  }
}
