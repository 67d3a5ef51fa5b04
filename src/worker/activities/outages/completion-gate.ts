/**
 * Whether the Temporal server answers right now, asked before a finished activity result is handed to the worker.
 *
 * sdk-core sends an activity's completion with its client's default retries (10 tries, 100 ms growing ×1.7 up to 5 s,
 * at most 10 s in all) and then drops the result; a worker cannot change that (sdk-core's `init_worker` overwrites
 * the connection's retry options, and the TypeScript worker exposes none). So a result is handed over only when the
 * server answers; otherwise it is delivered later (see keep-finished.ts).
 *
 * Asking costs nothing while the server answers: while activities run, one probe a second, shared by all of them,
 * keeps the answer fresh, and a result that is ready within {@link CompletionGateOptions.freshMs} of a good probe goes
 * at once. Between activities ({@link CompletionGate.watch}) it probes every {@link CompletionGateOptions.idleRefreshMs},
 * so that a worker that was idle during an outage still knows there was one when a retry reaches it.
 */

export interface CompletionGateOptions {
  /** Resolves when the Temporal frontend answers; rejects when it does not. */
  probe: () => Promise<unknown>;
  /** A probe that succeeded this recently (and no failed probe since) vouches for the server. Default 3 s. */
  freshMs?: number;
  /** While activities run, probe this often. Default 1 s. */
  refreshMs?: number;
  /**
   * While watching and no activity runs, probe this often. Default 2 s: with `freshMs` 3 s the answer stays fresh
   * between activities too, so a result never waits for a probe while the server answers.
   */
  idleRefreshMs?: number;
  /** Stop watching after this long with no activity and no answer (a closed worker's connection). Default 30 min. */
  idleStopMs?: number;
  /** A probe that has not answered after this long counts as failed. Default 15 s. */
  probeTimeoutMs?: number;
  /** Wait after a failed probe before the next, while waiting for the server; doubles up to `maxRetryMs`. Default 500 ms. */
  retryMs?: number;
  /** Default 2 s. */
  maxRetryMs?: number;
  /** A probe unanswered for this long closes the gate while it runs (a healthy server answers in milliseconds). Default 1 s. */
  pendingMs?: number;
  /**
   * A probe that hangs this long, or answers only after it, counts as an outage for {@link CompletionGate.outageSince}
   * (sdk-core retries a probe for 10 s, so an outage shorter than that fails none). Default 2 s: a server that is merely
   * slow under load (a CPU-starved machine) should not count.
   */
  outageHangMs?: number;
  /**
   * Called after each probe that failed or answered only after hanging longer than `outageHangMs`: the server was away,
   * and a report sdk-core sent meanwhile may not have reached it.
   */
  onOutage?: () => void;
  /** The clock; tests pass their own. */
  now?: () => number;
}

export const DEFAULT_COMPLETION_GATE = {
  freshMs: 3_000,
  refreshMs: 1_000,
  idleRefreshMs: 2_000,
  idleStopMs: 30 * 60_000,
  probeTimeoutMs: 15_000,
  pendingMs: 1_000,
  outageHangMs: 2_000,
  retryMs: 500,
  maxRetryMs: 2_000,
};

export class CompletionGate {
  private readonly options: Required<Omit<CompletionGateOptions, 'onOutage'>> & Pick<CompletionGateOptions, 'onOutage'>;
  private lastAnswerAt = Number.NEGATIVE_INFINITY;
  private lastFailureAt = Number.NEGATIVE_INFINITY;
  private lastProbeAt = Number.NEGATIVE_INFINITY;
  /** When a probe last failed or answered only after hanging longer than `pendingMs`. */
  private lastTroubleAt = Number.NEGATIVE_INFINITY;
  /** When a probe last failed or answered only after hanging longer than `outageHangMs`. */
  private lastOutageAt = Number.NEGATIVE_INFINITY;
  private probing: Promise<boolean> | undefined;
  private running = 0;
  private lastActiveAt = Number.NEGATIVE_INFINITY;
  private refresher: ReturnType<typeof setInterval> | undefined;
  /** A probe found the worker's connection closed (the worker stopped): no answer will come any more. */
  private connectionClosed = false;
  /** Probes started, for tests and the benchmark's accounting. */
  probes = 0;

  constructor(options: CompletionGateOptions) {
    this.options = { ...DEFAULT_COMPLETION_GATE, now: Date.now, ...options };
  }

  /**
   * True when a recent probe succeeded, none failed since, and none has been waiting for an answer for long (sdk-core
   * retries a probe for up to 10 s before it fails, so a server that just went down shows first as a probe that hangs).
   */
  isOpen(): boolean {
    const { now, freshMs, pendingMs } = this.options;
    const time = now();
    if (this.probing !== undefined && time - this.lastProbeAt > pendingMs) return false;
    return this.lastAnswerAt > this.lastFailureAt && time - this.lastAnswerAt <= freshMs;
  }

  /**
   * True when the server stopped answering at some moment since `time` (the gate's clock, see {@link time}): a probe
   * failed, one answered only after hanging longer than `pendingMs`, or one hangs now. When it is back, Temporal times
   * out at once the attempts whose heartbeat timeout passed meanwhile, so such an attempt may be gone.
   */
  troubledSince(time: number): boolean {
    return this.awaySince(time, this.options.pendingMs, this.lastTroubleAt);
  }

  /** Like {@link troubledSince}, for hangs longer than `outageHangMs`: the server was away, not merely slow. */
  outageSince(time: number): boolean {
    return this.awaySince(time, this.options.outageHangMs, this.lastOutageAt);
  }

  /** A probe hangs longer than `hangMs` now, or one that failed or hung that long ended at `lastAt`, not before `time`. */
  private awaySince(time: number, hangMs: number, lastAt: number): boolean {
    if (this.probing !== undefined && this.options.now() - this.lastProbeAt > hangMs) return true;
    return lastAt >= time;
  }

  /** The gate's clock. */
  time(): number {
    return this.options.now();
  }

  /**
   * Probe in the background from now on: every `refreshMs` while activities run, every `idleRefreshMs` otherwise,
   * until `idleStopMs` pass with neither an activity nor an answer.
   */
  watch(): void {
    this.lastActiveAt = this.options.now();
    if (this.refresher !== undefined) return;
    this.refresher = setInterval(() => {
      const { now, idleStopMs } = this.options;
      if (this.running === 0 && now() - Math.max(this.lastActiveAt, this.lastAnswerAt) > idleStopMs) this.close();
      else this.refresh();
    }, this.options.refreshMs);
    this.refresher.unref();
  }

  /** An activity attempt started: keep the answer fresh while any runs. */
  enter(): void {
    this.running++;
    this.refresh();
    this.watch();
  }

  /** The attempt has its result (or failure). */
  leave(): void {
    this.running = Math.max(0, this.running - 1);
    this.lastActiveAt = this.options.now();
  }

  /** Stop the background probes (tests; a worker's gate lives as long as its process). */
  close(): void {
    clearInterval(this.refresher);
    this.refresher = undefined;
  }

  /** The running probe's answer, or a new probe's: true when the server answered. */
  check(): Promise<boolean> {
    this.probing ??= this.probeOnce().finally(() => (this.probing = undefined));
    return this.probing;
  }

  /** True once a probe found the worker's connection closed: the worker stopped, and nothing can reach Temporal. */
  get stopped(): boolean {
    return this.connectionClosed;
  }

  /**
   * Probe, with growing pauses, until the server answers, `until` (ms since the epoch) passes, `signal` aborts or the
   * worker's connection is closed (its worker stopped: nothing could be sent any more, and the wait would keep a
   * stopped worker's process alive until `until`).
   */
  async waitForAnswer(until: number, signal?: AbortSignal): Promise<{ answered: boolean; waitedMs: number }> {
    const { now } = this.options;
    const startedAt = now();
    let delay = this.options.retryMs;
    for (;;) {
      if (await this.check()) return { answered: true, waitedMs: now() - startedAt };
      if (this.connectionClosed || signal?.aborted || now() + delay >= until) {
        return { answered: false, waitedMs: now() - startedAt };
      }
      await sleep(delay, signal);
      delay = Math.min(delay * 2, this.options.maxRetryMs);
    }
  }

  /** Start a probe unless one is running or the last started less than `refreshMs` (or `idleRefreshMs`) ago. */
  private refresh(): void {
    const interval = this.running > 0 ? this.options.refreshMs : this.options.idleRefreshMs;
    if (this.probing === undefined && this.options.now() - this.lastProbeAt >= interval) {
      void this.check();
    }
  }

  private async probeOnce(): Promise<boolean> {
    const { now, probeTimeoutMs } = this.options;
    const startedAt = (this.lastProbeAt = now());
    this.probes++;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        this.options.probe(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer')), probeTimeoutMs);
          timer.unref();
        }),
      ]);
      this.lastAnswerAt = now();
      const tookMs = this.lastAnswerAt - startedAt;
      if (tookMs > this.options.pendingMs) this.lastTroubleAt = this.lastAnswerAt;
      if (tookMs > this.options.outageHangMs) {
        this.lastOutageAt = this.lastAnswerAt;
        this.options.onOutage?.();
      }
      return true;
    } catch (error) {
      this.lastFailureAt = this.lastTroubleAt = this.lastOutageAt = now();
      // The worker's connection was closed (the worker shut down): nothing left to watch for.
      if (isClosedConnection(error)) {
        this.connectionClosed = true;
        this.close();
      } else this.options.onOutage?.();
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** What a closed `NativeConnection` (IllegalStateError "Client already closed") or grpc-js channel rejects with. */
function isClosedConnection(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'IllegalStateError' || /^(Client already closed|Channel has been shut down)/.test(error.message))
  );
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
