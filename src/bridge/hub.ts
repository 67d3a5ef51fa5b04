import { setTimeout as sleep } from 'node:timers/promises';
import type { StreamEvent } from '../workflows/stream-events.js';

/** Opens one upstream subscription to a conversation's events (e.g. `subscribe()` on the Temporal client). */
export type EventSource = (
  conversationId: string,
  options: { from?: number; signal: AbortSignal },
) => AsyncIterable<StreamEvent>;

export interface Watcher {
  event(event: StreamEvent): void;
  /** The conversation ended: no more events will come. */
  end(): void;
  /** The upstream subscription failed; the hub keeps retrying. */
  error?(error: unknown): void;
}

export interface SubscriptionHubOptions {
  /** How long an upstream subscription stays open after its last watcher left (a reload reconnects). Default 15 s. */
  lingerMs?: number;
  /** Pause before re-opening an upstream subscription that failed. Default 1 s. */
  retryDelayMs?: number;
}

interface Upstream {
  watchers: Set<Watcher>;
  /** The pump: settles once the upstream subscription has stopped and its calls have settled. */
  pumping: Promise<void>;
  /** The latest turn from its `turn_started` on, for watchers that join late. */
  turn: StreamEvent[];
  controller: AbortController;
  linger: ReturnType<typeof setTimeout> | undefined;
  ended: boolean;
}

/**
 * One upstream subscription per conversation, shared by every watcher (browser) of it: a workflow allows 10 updates
 * in flight, so a bridge must not poll once per viewer. A watcher that joins late gets the latest turn from its start
 * (or from the offset it names), then the live events. The bridge's own part (`StreamingBridge.hub`).
 * @internal
 */
export class SubscriptionHub {
  private readonly upstreams = new Map<string, Upstream>();
  /** Every pump still running, dropped ones included (a dropped pump still has calls to settle). */
  private readonly pumps = new Set<Promise<void>>();
  private readonly lingerMs: number;
  private readonly retryDelayMs: number;
  private closed = false;

  constructor(
    private readonly source: EventSource,
    options: SubscriptionHubOptions = {},
  ) {
    this.lingerMs = options.lingerMs ?? 15_000;
    this.retryDelayMs = options.retryDelayMs ?? 1_000;
  }

  /** Conversations with an open upstream subscription. */
  get subscriptions(): number {
    return this.upstreams.size;
  }

  /**
   * Watch a conversation from offset `from` (default: the latest turn's start). Returns the function to stop. The
   * watcher gets each event once, in order, none before `from`: also when its upstream started earlier (a reconnect
   * with `Last-Event-ID` to a bridge that has just restarted).
   */
  watch(conversationId: string, given: Watcher, from?: number): () => void {
    const watcher = fromOffset(given, from);
    let upstream = this.upstreams.get(conversationId);
    if (!upstream) {
      const created: Upstream = {
        watchers: new Set(),
        pumping: Promise.resolve(),
        turn: [],
        controller: new AbortController(),
        linger: undefined,
        ended: false,
      };
      created.pumping = this.pump(conversationId, created, from);
      this.pumps.add(created.pumping);
      void created.pumping.then(() => this.pumps.delete(created.pumping));
      this.upstreams.set(conversationId, created);
      upstream = created;
    }
    clearTimeout(upstream.linger);
    upstream.linger = undefined;
    for (const event of upstream.turn) watcher.event(event);
    if (upstream.ended) {
      watcher.end();
      return () => undefined;
    }
    upstream.watchers.add(watcher);
    const owner = upstream;
    return () => {
      owner.watchers.delete(watcher);
      // A hub that is closing (or an upstream it dropped) keeps no timer: it would keep the process alive.
      const current = this.upstreams.get(conversationId) === owner;
      if (owner.watchers.size === 0 && !owner.ended && current && !this.closed) {
        owner.linger = setTimeout(() => this.drop(conversationId, owner), this.lingerMs);
      }
    };
  }

  /**
   * Stop every upstream subscription; resolves once they have stopped (their calls cancelled and settled), so the
   * Temporal connection can be closed next.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const [conversationId, upstream] of this.upstreams) this.drop(conversationId, upstream);
    await Promise.all(this.pumps);
  }

  private drop(conversationId: string, upstream: Upstream): void {
    clearTimeout(upstream.linger);
    upstream.controller.abort();
    if (this.upstreams.get(conversationId) === upstream) this.upstreams.delete(conversationId);
  }

  /**
   * Read the conversation into the upstream's watchers, from the latest turn's start (so the turn kept for late
   * watchers is whole), or from `wanted` (its first watcher's offset) when that is older: a browser that reconnects
   * after a newer turn began gets the rest of the turn it was reading first.
   */
  private async pump(conversationId: string, upstream: Upstream, wanted: number | undefined): Promise<void> {
    const { signal } = upstream.controller;
    let from: number | undefined;
    while (!signal.aborted && !this.closed) {
      try {
        let rewind = false;
        for await (const event of this.source(conversationId, { from, signal })) {
          // Once only: an offset older than what the workflow keeps resolves to the latest turn's start again.
          rewind = wanted !== undefined && from === undefined && event.offset > wanted;
          if (rewind) {
            from = wanted;
            wanted = undefined;
            break;
          }
          wanted = undefined;
          from = event.offset + 1;
          if (event.type === 'turn_started') upstream.turn = [];
          upstream.turn.push(event);
          for (const watcher of upstream.watchers) watcher.event(event);
        }
        if (signal.aborted) return;
        if (rewind) continue;
        // The conversation ended. Watchers hear it; the next one to come opens a fresh upstream.
        upstream.ended = true;
        for (const watcher of upstream.watchers) watcher.end();
        this.drop(conversationId, upstream);
        return;
      } catch (error) {
        if (signal.aborted) return;
        for (const watcher of upstream.watchers) watcher.error?.(error);
        await sleep(this.retryDelayMs, undefined, { signal }).catch(() => undefined);
      }
    }
  }
}

/** The watcher's events from offset `from` on, each once: the upstream may have started before it. */
function fromOffset(watcher: Watcher, from: number | undefined): Watcher {
  let next = from ?? 0;
  return {
    event: (event) => {
      if (event.offset < next) return;
      next = event.offset + 1;
      watcher.event(event);
    },
    end: () => watcher.end(),
    ...(watcher.error ? { error: (error: unknown) => watcher.error?.(error) } : {}),
  };
}
