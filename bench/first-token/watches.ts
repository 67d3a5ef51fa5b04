import { performance } from 'node:perf_hooks';
import type { Client } from '@temporalio/client';
import { subscribe } from '../../src/client/stream.js';

/**
 * What a viewer of one conversation saw: when its stream was open, when the first answer text arrived and when the turn
 * finished. Times are ms since the epoch with fractions, as the scripted model stamps its requests.
 */
export interface Watch {
  /** The stream is open (for an event stream: its response headers have arrived). */
  opened: Promise<void>;
  firstTextMs: Promise<number>;
  finished: Promise<void>;
}

export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Settles a {@link Watch} from the event types seen, in order; an error or an early end rejects what is pending. */
class WatchRecorder {
  private resolveOpened!: () => void;
  private resolveText!: (at: number) => void;
  private resolveFinished!: () => void;
  private rejectAll!: (error: Error) => void;
  readonly watch: Watch;

  constructor() {
    const rejects: ((error: Error) => void)[] = [];
    const deferred = <T>(keep: (resolve: (value: T) => void) => void) =>
      new Promise<T>((resolve, reject) => {
        keep(resolve);
        rejects.push(reject);
      });
    this.watch = {
      opened: deferred<void>((resolve) => (this.resolveOpened = resolve)),
      firstTextMs: deferred<number>((resolve) => (this.resolveText = resolve)),
      finished: deferred<void>((resolve) => (this.resolveFinished = resolve)),
    };
    // Whoever awaits only `finished` must not see an unhandled rejection of the others.
    for (const promise of Object.values(this.watch)) (promise as Promise<unknown>).catch(() => undefined);
    this.rejectAll = (error) => rejects.forEach((reject) => reject(error));
  }

  opened(): void {
    this.resolveOpened();
  }

  event(type: string): void {
    if (type === 'text_delta') this.resolveText(epochMs());
    if (type === 'turn_finished') this.resolveFinished();
  }

  /** Resolved promises stay resolved: this only settles what had not come. */
  ended(error: unknown): void {
    this.rejectAll(
      error instanceof Error ? error : new Error(`the stream ended before the turn finished: ${String(error)}`),
    );
  }
}

/** A client subscribed through the durable-agent client API (`subscribe`). */
export function watchSubscription(client: Client, conversationId: string, signal: AbortSignal): Watch {
  const recorder = new WatchRecorder();
  recorder.opened();
  void (async () => {
    try {
      for await (const event of subscribe(client, conversationId, { signal })) recorder.event(event.type);
      recorder.ended('the subscription ended');
    } catch (error) {
      recorder.ended(error);
    }
  })();
  return recorder.watch;
}

/** A browser's `EventSource` on `durable-agent serve`: `GET /conversations/:id/events`, read as it arrives. */
export function watchEventStream(bridgeUrl: string, conversationId: string, signal: AbortSignal): Watch {
  const recorder = new WatchRecorder();
  void (async () => {
    try {
      const response = await fetch(`${bridgeUrl}/conversations/${encodeURIComponent(conversationId)}/events`, {
        headers: { accept: 'text/event-stream' },
        signal,
      });
      if (!response.ok || response.body === null) throw new Error(`serve answered ${response.status}`);
      recorder.opened();
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const bytes of response.body) {
        buffered += decoder.decode(bytes as Uint8Array, { stream: true });
        // Events end with a blank line; only their `event:` line matters here.
        let end: number;
        while ((end = buffered.indexOf('\n\n')) !== -1) {
          const type = /^event: (.+)$/m.exec(buffered.slice(0, end))?.[1];
          buffered = buffered.slice(end + 2);
          if (type !== undefined) recorder.event(type);
        }
      }
      recorder.ended('the event stream ended');
    } catch (error) {
      recorder.ended(error);
    }
  })();
  return recorder.watch;
}
