/**
 * The results of activity attempts this worker finished, kept for a while in case Temporal never received them.
 *
 * sdk-core retries an activity's completion for about 10 s and then drops it (see docs/reliability.md, "Temporal
 * outages"). When the server is back it times the attempt out and schedules a retry; if the retry reaches this worker,
 * it gets the kept result instead of running the call again, which would be a second paid model call, or "outcome
 * unknown" for a tool that did run. Keyed by run and activity id, so only a retry of the same call can match.
 */

export interface ResultCacheOptions {
  /** How long a result is kept after its attempt finished. Default 30 minutes. */
  ttlMs?: number;
  /** Most results kept. Default 5,000. */
  maxEntries?: number;
  /** Most characters kept over all results (as estimated by the caller). Default 16,000,000. */
  maxChars?: number;
  /** A larger result is not kept at all. Default 1,000,000 characters. */
  maxEntryChars?: number;
  /** The clock; tests pass their own. */
  now?: () => number;
}

/** Which activity execution a result belongs to: activity ids are unique within a run, run ids across workflows. */
export interface ActivityKey {
  runId: string;
  activityId: string;
}

export interface KeptResult<T> {
  value: T;
  /** The attempt that produced it. */
  attempt: number;
}

interface Entry extends KeptResult<unknown> {
  runId: string;
  activityId: string;
  chars: number;
  keptAt: number;
}

export const DEFAULT_RESULT_CACHE: Required<Omit<ResultCacheOptions, 'now'>> = {
  ttlMs: 30 * 60_000,
  maxEntries: 5_000,
  maxChars: 16_000_000,
  maxEntryChars: 1_000_000,
};

export class ResultCache {
  private readonly options: Required<Omit<ResultCacheOptions, 'now'>>;
  private readonly now: () => number;
  /** Oldest first: a Map iterates in insertion order, and an entry is re-inserted when replaced. */
  private readonly entries = new Map<string, Entry>();
  /** Keys of the entries of each run, to drop a run's settled results together. */
  private readonly runs = new Map<string, Set<string>>();
  private chars = 0;

  constructor(options: ResultCacheOptions = {}) {
    const { now, ...limits } = options;
    this.options = { ...DEFAULT_RESULT_CACHE, ...limits };
    this.now = now ?? Date.now;
  }

  /** Results kept now. */
  get size(): number {
    return this.entries.size;
  }

  /** Characters kept now, as estimated when each result was kept. */
  get keptChars(): number {
    return this.chars;
  }

  /** Keep the result of an attempt that just finished; `chars` estimates its size. */
  put<T>(key: ActivityKey, value: T, chars: number, attempt: number): void {
    const id = keyOf(key);
    this.delete(id);
    if (chars > this.options.maxEntryChars) return;
    this.entries.set(id, { ...key, value, attempt, chars, keptAt: this.now() });
    this.chars += chars;
    let keys = this.runs.get(key.runId);
    if (!keys) this.runs.set(key.runId, (keys = new Set()));
    keys.add(id);
    this.evict();
  }

  /** The kept result of this activity execution, if any. */
  get<T>(key: ActivityKey): KeptResult<T> | undefined {
    this.evict();
    const entry = this.entries.get(keyOf(key));
    return entry && { value: entry.value as T, attempt: entry.attempt };
  }

  /**
   * The workflow has recorded every activity of this run scheduled before `key`'s: drop their results. A model call
   * is scheduled only after the previous model call and all of its tool calls completed, so its start proves that.
   * Activity ids the TypeScript SDK assigns are increasing numbers; other ids settle nothing.
   */
  settleBefore(key: ActivityKey): void {
    const keys = this.runs.get(key.runId);
    const before = Number(key.activityId);
    if (!keys || !Number.isSafeInteger(before)) return;
    for (const id of [...keys]) {
      const activityId = Number(this.entries.get(id)?.activityId);
      if (Number.isSafeInteger(activityId) && activityId < before) this.delete(id);
    }
  }

  private delete(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.chars -= entry.chars;
    const keys = this.runs.get(entry.runId);
    keys?.delete(id);
    if (keys?.size === 0) this.runs.delete(entry.runId);
  }

  /** Drop the oldest results while any is too old or the cache holds too many or too much. */
  private evict(): void {
    const expired = this.now() - this.options.ttlMs;
    for (const [id, entry] of this.entries) {
      const over = this.entries.size > this.options.maxEntries || this.chars > this.options.maxChars;
      if (!over && entry.keptAt > expired) break;
      this.delete(id);
    }
  }
}

function keyOf(key: ActivityKey): string {
  return `${key.runId}/${key.activityId}`;
}
