/**
 * Whether a server is down, and when the tool listing may try it again. A server that cannot be started, reached or
 * listed is left out of a turn's tools rather than failing the turn; to keep a broken server from being hammered (a
 * start attempt per turn, a stuck `initialize` holding up every turn's first model call), the listing tries it again
 * only after a backoff that doubles with each failure in a row. Tool calls ignore the backoff: a call to a server that
 * is down keeps the retry semantics of the tool activity (docs/mcp.md). One log line when a server goes down and one
 * when it is back, not one per turn.
 */

/** Backoff of the listing after a server's first failure in a row. */
export const DEFAULT_OUTAGE_BACKOFF_MS = 10_000;
/** Longest backoff of the listing. */
export const DEFAULT_OUTAGE_MAX_BACKOFF_MS = 5 * 60_000;

export interface OutageSettings {
  backoffMs: number;
  maxBackoffMs: number;
  /** Clock, for tests. */
  now: () => number;
  /** One line when the server goes down... */
  onDown: (reason: string, retryInMs: number) => void;
  /** ...and one when it works again. */
  onBack: (downForMs: number, failures: number) => void;
}

export interface Outage {
  /** Why the last attempt failed (already redacted: it reaches the turn result). */
  reason: string;
  /** Failed attempts in a row. */
  failures: number;
  since: number;
  /** The listing does not try the server again before this time. */
  retryAt: number;
}

export class ServerOutages {
  private outage: Outage | undefined;

  constructor(private readonly settings: OutageSettings) {}

  /** The current outage, if the server is down. */
  get current(): Outage | undefined {
    return this.outage;
  }

  /** False while the server is down and its backoff has not run out. */
  mayTry(): boolean {
    return this.outage === undefined || this.settings.now() >= this.outage.retryAt;
  }

  /** An attempt to start, reach or list the server failed. */
  failed(reason: string): void {
    const now = this.settings.now();
    const failures = (this.outage?.failures ?? 0) + 1;
    const delay = Math.min(this.settings.backoffMs * 2 ** (failures - 1), this.settings.maxBackoffMs);
    const first = this.outage === undefined;
    this.outage = { reason, failures, since: this.outage?.since ?? now, retryAt: now + delay };
    if (first) this.settings.onDown(reason, delay);
  }

  /** The server answered: any outage is over. */
  succeeded(): void {
    if (this.outage === undefined) return;
    const { since, failures } = this.outage;
    this.outage = undefined;
    this.settings.onBack(this.settings.now() - since, failures);
  }
}
