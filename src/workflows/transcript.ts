import { chainDigest, EMPTY_DIGEST } from '../shared/digest.js';
import { MAX_PART_BYTES, tailWithinBytes } from '../shared/payload-limits.js';
import type { ChatMessage, TranscriptPosition } from '../shared/types.js';

/**
 * This run's transcript: append-only, with the chained digest of every prefix, so a position always names the same
 * messages and a worker can check its cached copy against it.
 */
export class Transcript {
  readonly messages: ChatMessage[] = [];
  private readonly digests: string[] = [EMPTY_DIGEST];
  /** How many messages some worker has already been sent or has produced (the next model call's prefix). */
  private sharedCount = 0;

  /**
   * @param initial messages the run starts with.
   * @param initialShared treat them as known to workers: true for a transcript carried from an earlier run, which a
   *   worker fetches by query once instead of the run's first model call carrying it into history.
   */
  constructor(initial: readonly ChatMessage[] = [], initialShared = false) {
    this.append(...initial);
    if (initialShared) this.sharedCount = initial.length;
  }

  get length(): number {
    return this.messages.length;
  }

  append(...messages: ChatMessage[]): void {
    for (const message of messages) {
      const previous = this.digests[this.digests.length - 1] ?? EMPTY_DIGEST;
      this.messages.push(message);
      this.digests.push(chainDigest(previous, message));
    }
  }

  position(count: number): TranscriptPosition {
    const digest = this.digests[count];
    if (digest === undefined) throw new RangeError(`Transcript has ${this.length} messages, not ${count}`);
    return { count, digest };
  }

  /**
   * The prefix to name and the messages to send in full for the next model call. The messages sent stay within
   * `maxBytes` of JSON, so the activity's input fits a Temporal payload: those that do not fit (the first ones: a
   * round's large tool results, say) join the prefix, and the worker reads them from the workflow by query.
   */
  nextModelInput(maxBytes: number = MAX_PART_BYTES): { prefix: TranscriptPosition; newMessages: ChatMessage[] } {
    const unshared = this.messages.slice(this.sharedCount);
    const start = tailWithinBytes(unshared, maxBytes);
    return { prefix: this.position(this.sharedCount + start), newMessages: unshared.slice(start) };
  }

  /** The worker that made the last model call holds everything up to and including its answer. */
  markShared(count: number): void {
    this.sharedCount = count;
  }

  /**
   * The messages up to `count` are in history already (a round's tool results, each its activity's result): the next
   * model call names them as part of its prefix instead of carrying them again. A worker that did not run those calls
   * reads them by query, which adds nothing to history.
   */
  markRecorded(count: number): void {
    this.sharedCount = Math.max(this.sharedCount, count);
  }
}
