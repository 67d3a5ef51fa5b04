import { CompleteAsyncError, Context } from '@temporalio/activity';
import { ActivityNotFoundError, type Client, type FullActivityId } from '@temporalio/client';
import { errorMessage } from '../../../shared/errors.js';
import { CompletionGate, type CompletionGateOptions } from './completion-gate.js';
import { failedAttemptsBefore } from '../calls/attempts.js';
import { AttemptHeartbeat } from '../calls/heartbeat.js';
import {
  DEFAULT_RESULT_CACHE,
  ResultCache,
  type ActivityKey,
  type KeptResult,
  type ResultCacheOptions,
} from './result-cache.js';

/**
 * Finished work survives a Temporal outage (docs/reliability.md, "Temporal outages"). sdk-core gives up on an
 * activity's completion after about 10 s, and Temporal then times the attempt out and runs it again: a second paid
 * model call, or "outcome unknown" for a tool call that did run. So each attempt's result is kept by this worker
 * ({@link ResultCache}), and handed to the worker only when the server answers ({@link CompletionGate}). When it does
 * not, the activity ends as "completes asynchronously" and the worker delivers the result itself once the server is
 * back: by task token, or, if that attempt has meanwhile timed out, by activity id, which completes the retry wherever
 * it is (waiting or running on any worker). A retry that reaches this worker first gets the kept result.
 */

export interface KeepFinishedOptions {
  cache?: ResultCacheOptions;
  gate?: Omit<CompletionGateOptions, 'probe'>;
  /** How long the worker keeps trying to deliver a result Temporal did not take. Default: the cache's time to live. */
  deliverForMs?: number;
  /**
   * How long a retry that reaches this worker without a kept result waits, heartbeating, for the worker of an earlier
   * attempt to deliver the result it may have kept, when Temporal was unreachable within the last minute. Default 10 s.
   */
  holderWaitMs?: number;
}

export interface KeepFinishedCall<T> {
  /** Estimated characters of a result, for the cache's size bound. */
  size: (value: T) => number;
  /** A model call: its start proves the workflow recorded the run's earlier activities, so their results are dropped. */
  settlesRun?: boolean;
  /**
   * A call that must not run twice: a retry after an attempt that was lost (it recorded no failure: its worker died, or
   * Temporal timed it out while it was down) waits for that attempt's result as after an outage this worker saw. A
   * short outage may time out a running attempt while a worker that polled idly saw nothing of it.
   */
  unsafeToRepeat?: boolean;
  /**
   * Deliver failures too (model calls: a lost non-retryable failure would be retried, a second paid call), to the same
   * attempt only: a retry after a failure must run. Tool failures go as before: they carry the "request not sent"
   * heartbeat that only the worker's own report sends.
   */
  deliverFailures?: boolean;
}

/** Why this worker delivers an outcome itself (see {@link FinishedWork.deliverLater}). */
type Why = 'kept' | 'outage' | 'handed over';
/** Why an attempt ends without a report and this worker delivers its outcome instead. */
type HandOffWhy = Exclude<Why, 'handed over'>;

type Outcome = { kind: 'completed'; value: unknown } | { kind: 'failed'; error: unknown };

/** What delivering an outcome takes (kept instead of the activity's Context, which holds much more). */
interface Delivery {
  client: Client;
  taskToken: Uint8Array;
  id: FullActivityId;
  log: Context['log'];
  outcome: Outcome;
}

/** An outcome handed to the worker (sdk-core) to report, while the server seemed to answer. */
interface HandedOver {
  at: number;
  delivery: Delivery;
}

/**
 * How long after handing an outcome to the worker a failed probe makes it deliver the outcome itself too: sdk-core
 * retries a completion for up to 10 s, and a probe that started meanwhile fails up to 10 s after it started.
 */
const HANDED_OVER_WINDOW_MS = 20_000;

/**
 * A retry this soon after the server stopped answering (a failed probe, or one that answered only after hanging more
 * than 2 s) may be the retry of an attempt whose result another worker kept.
 */
const RECENT_OUTAGE_MS = 60_000;
/** The longest pause between two delivery attempts that the server refused for a reason other than "not found". */
const MAX_DELIVERY_PAUSE_MS = 30_000;
/**
 * A kept result whose worker stopped (its connections closed) before Temporal answered again: nothing can send it any
 * more, and waiting would keep the stopped worker's process alive. The call's retry runs it again elsewhere (its
 * heartbeat timeout ends this attempt), unless sdk-core's own report got through.
 */
const STOPPED_UNDELIVERED =
  'The worker stopped before Temporal answered again: the kept result was not delivered ' +
  '(unless the worker reported it before, a retry of the call runs it again)';

export class FinishedWork {
  readonly cache: ResultCache;
  readonly gate: CompletionGate;
  private readonly deliverForMs: number;
  private readonly holderWaitMs: number;
  /** Results handed over to be delivered after an outage and not yet delivered. */
  pendingDeliveries = 0;
  /** Outcomes handed to the worker within the last {@link HANDED_OVER_WINDOW_MS}, oldest first. */
  private handedOver: HandedOver[] = [];
  /** Attempts running on this worker, by run and activity id. */
  private readonly running = new Map<string, Promise<unknown>>();

  /**
   * @param probe asks the server whether it answers (the worker's own connection, which completions go through)
   * @param fallbackClient delivers when the activity context has no client (a mock environment)
   */
  constructor(
    probe: () => Promise<unknown>,
    private readonly fallbackClient: Client,
    options: KeepFinishedOptions = {},
  ) {
    this.cache = new ResultCache(options.cache);
    this.gate = new CompletionGate({ ...options.gate, probe, onOutage: () => this.redeliverHandedOver() });
    // From the start: a worker that ran nothing during an outage must still know of it when a retry reaches it.
    this.gate.watch();
    this.deliverForMs = options.deliverForMs ?? options.cache?.ttlMs ?? DEFAULT_RESULT_CACHE.ttlMs;
    this.holderWaitMs = options.holderWaitMs ?? 10_000;
  }

  /**
   * Run one attempt of the current activity so that its result survives an outage. A retry of an attempt whose result
   * this worker has (kept, or about to come from an earlier attempt still running here) returns it without running.
   */
  async run<T>(call: KeepFinishedCall<T>, attempt: () => Promise<T>): Promise<T> {
    const context = Context.current();
    // Made now, so the attempt's clock (../calls/heartbeat.ts) starts at its first moment, before any wait here.
    AttemptHeartbeat.of(context);
    const { info } = context;
    // Activities started by a workflow only (a standalone activity has no run to key its result by).
    const runId = info.workflowExecution?.runId;
    const key = runId === undefined ? undefined : { runId, activityId: info.activityId };
    if (key && info.attempt > 1) {
      const earlier = await this.earlierResult<T>(context, key, call.unsafeToRepeat === true);
      if (earlier) {
        this.handOver(context, { kind: 'completed', value: earlier.value });
        return earlier.value;
      }
    }
    if (key && call.settlesRun) this.cache.settleBefore(key);
    const startedAt = this.gate.time();
    this.gate.enter();
    const running = attempt();
    const id = key && keyOf(key);
    if (id) this.running.set(id, running);
    let value: T;
    try {
      value = await running;
    } catch (error) {
      this.gate.leave();
      if (id && this.running.get(id) === running) this.running.delete(id);
      // An attempt that ended without a report (Temporal closed it) has nothing to deliver.
      const reportable = !context.cancellationSignal.aborted && !(error instanceof CompleteAsyncError);
      if (call.deliverFailures && reportable) {
        const { deliverItself, why } = await this.route(startedAt);
        if (deliverItself) this.handOff(context, { kind: 'failed', error }, why);
        this.handOver(context, { kind: 'failed', error });
      }
      throw error;
    }
    this.gate.leave();
    if (key) this.cache.put(key, value, call.size(value), info.attempt);
    if (id && this.running.get(id) === running) this.running.delete(id);
    const { deliverItself, why } = await this.route(startedAt);
    if (deliverItself) this.handOff(context, { kind: 'completed', value }, why);
    this.handOver(context, { kind: 'completed', value });
    return value;
  }

  /**
   * The result of an earlier attempt of this call, if this worker has it or can get it: kept in the cache; still
   * running here (Temporal timed it out, e.g. while the server was down, and sent this retry: wait for it); or, right
   * after an outage, delivered meanwhile by the worker of the earlier attempt (then this attempt is cancelled).
   */
  private async earlierResult<T>(
    context: Context,
    key: ActivityKey,
    unsafeToRepeat: boolean,
  ): Promise<KeptResult<T> | undefined> {
    const kept = this.cache.get<T>(key);
    if (kept) {
      context.log.info('returning the result this worker kept from an earlier attempt (Temporal did not get it)', {
        keptFromAttempt: kept.attempt,
      });
      return kept;
    }
    const running = this.running.get(keyOf(key)) as Promise<T> | undefined;
    if (running) {
      context.log.info('an earlier attempt of this call still runs on this worker: waiting for its result', {});
      // Heartbeating with the details the earlier attempts recorded: this attempt may be lost while it waits, and the
      // next one must still find the count of failed attempts and a "request not sent" record.
      const value = await AttemptHeartbeat.of(context).during(
        Promise.race([
          running.then(
            (result) => ({ result }),
            () => undefined,
          ),
          context.cancelled,
        ]),
      );
      if (value) return { value: value.result, attempt: context.info.attempt - 1 };
    }
    // Right after an outage, the earlier attempt may have finished on another worker, which delivers its result by
    // activity id once it sees Temporal again: give it that moment before running the call a second time.
    const lostBefore = failedAttemptsBefore(context.info) < context.info.attempt - 1;
    if (this.gate.outageSince(this.gate.time() - RECENT_OUTAGE_MS) || (unsafeToRepeat && lostBefore)) {
      context.log.info('Temporal was unreachable moments ago: waiting for a result an earlier attempt may have kept', {
        waitAtMostSeconds: this.holderWaitMs / 1000,
      });
      const until = Date.now() + this.holderWaitMs;
      // The other worker's delivery closes the activity: this attempt's next heartbeat gets "not found", the worker
      // cancels the attempt, and the sleep throws. An earlier attempt on this worker may finish meanwhile too.
      const late = await AttemptHeartbeat.of(context).during(
        (async () => {
          while (Date.now() < until) {
            await context.sleep(Math.min(250, until - Date.now()));
            const result = this.cache.get<T>(key);
            if (result) return result;
          }
          return undefined;
        })(),
      );
      if (late) return late;
    }
    return undefined;
  }

  /**
   * The outcome goes to the worker to report. Remember it for a while: if the server turns out to be away soon after,
   * sdk-core's report may be lost, and the worker delivers the outcome itself as well.
   */
  private handOver(context: Context, outcome: Outcome): void {
    const at = Date.now();
    const stale = this.handedOver.findIndex((entry) => entry.at >= at - HANDED_OVER_WINDOW_MS);
    if (stale !== 0) this.handedOver.splice(0, stale === -1 ? this.handedOver.length : stale);
    this.handedOver.push({ at, delivery: this.deliveryOf(context, outcome) });
  }

  /**
   * A probe failed, or answered only after hanging (the server was away and is back): sdk-core's reports of the
   * outcomes handed over in the last {@link HANDED_OVER_WINDOW_MS} may not have got through (it gives up after about
   * 10 s), or reached a server that had meanwhile timed their attempts out (it logs "Activity not found on completion"
   * and drops the result). So deliver those too: by task token, else by activity id to the retry. A probe that got an
   * answer after the hand-over proves nothing: sdk-core sends its report on its own schedule, on a loaded machine after
   * the probe and after the server died. A delivery that finds its call closed (the report did get through) does
   * nothing.
   */
  private redeliverHandedOver(): void {
    const since = Date.now() - HANDED_OVER_WINDOW_MS;
    const recent = this.handedOver.filter((entry) => entry.at >= since);
    this.handedOver = [];
    for (const { delivery } of recent) this.deliverLater(delivery, 'handed over');
  }

  /**
   * Whether the worker reports an attempt's outcome (sdk-core), or this worker delivers it itself: when the server does
   * not answer (a fresh probe, else one probe), and also when it answers again but stopped answering while the attempt
   * ran. Then Temporal may have timed the attempt out as it came back, and refuses the worker's report ("Activity not
   * found on completion"); delivered here, by task token, else by activity id, it reaches the retry.
   */
  private async route(startedAt: number): Promise<{ deliverItself: boolean; why: HandOffWhy }> {
    if (!(this.gate.isOpen() || (await this.gate.check()))) return { deliverItself: true, why: 'kept' };
    return { deliverItself: this.gate.troubledSince(startedAt), why: 'outage' };
  }

  /** Deliver the outcome in the background and end the attempt without a report (throws `CompleteAsyncError`). */
  private handOff(context: Context, outcome: Outcome, why: HandOffWhy): never {
    this.deliverLater(this.deliveryOf(context, outcome), why);
    throw new CompleteAsyncError();
  }

  private deliveryOf(context: Context, outcome: Outcome): Delivery {
    const { info, log } = context;
    let client: Client;
    try {
      client = context.client;
    } catch {
      client = this.fallbackClient;
    }
    const id: FullActivityId = {
      workflowId: info.workflowExecution?.workflowId,
      runId: info.workflowExecution?.runId,
      activityId: info.activityId,
    };
    return { client, taskToken: info.taskToken, id, log, outcome };
  }

  /**
   * Deliver the outcome once the server answers: `kept` when the worker never got it, `outage` when the server answers
   * again but did not for a while during the attempt, `handed over` when sdk-core got it just before the server stopped
   * answering and may have given up on it.
   */
  private deliverLater(delivery: Delivery, why: Why): void {
    const { log, outcome } = delivery;
    if (why === 'kept') {
      log.warn(
        'Temporal does not answer: this worker keeps the finished result and delivers it when Temporal is back',
        {
          outcome: outcome.kind,
          keepTryingMinutes: Math.round(this.deliverForMs / 60_000),
        },
      );
    } else if (why === 'outage') {
      log.info(
        'Temporal stopped answering while this attempt ran: delivering its result itself (to the retry if the attempt timed out)',
        {
          outcome: outcome.kind,
        },
      );
    } else {
      log.info('Temporal stopped answering just after this result was handed over: delivering it too when it is back', {
        outcome: outcome.kind,
      });
    }
    this.pendingDeliveries++;
    void this.deliver(delivery, why).finally(() => this.pendingDeliveries--);
  }

  private async deliver(delivery: Delivery, why: Why): Promise<void> {
    const { client, taskToken, id, log, outcome } = delivery;
    const until = Date.now() + this.deliverForMs;
    const startedAt = Date.now();
    let pauseMs = 1_000;
    for (;;) {
      const { answered } = await this.gate.waitForAnswer(until);
      const waitedSeconds = Math.round((Date.now() - startedAt) / 100) / 10;
      if (!answered) {
        if (this.gate.stopped) log.error(STOPPED_UNDELIVERED, { waitedSeconds });
        else log.error('Temporal did not answer in time: the kept result was not delivered', { waitedSeconds });
        return;
      }
      try {
        try {
          await send(client, taskToken, outcome);
          log.info('Temporal is back: delivered the kept result', { waitedSeconds, to: 'the same attempt' });
        } catch (error) {
          // A failure is this attempt's own: a retry after it must run, not be failed by it.
          if (!(error instanceof ActivityNotFoundError) || outcome.kind === 'failed') throw error;
          // The attempt timed out while the server was down: complete the retry, whichever worker has it (or none yet).
          await send(client, id, outcome);
          log.info('Temporal is back: delivered the kept result', { waitedSeconds, to: 'the retry of the call' });
        }
        return;
      } catch (error) {
        if (error instanceof ActivityNotFoundError) {
          // Nothing waits for it: the worker's own report got through, a retry on this worker returned the kept result,
          // or the workflow moved on.
          const message = 'Temporal is back: the call was already closed; nothing to deliver';
          if (why !== 'handed over') log.info(message, { waitedSeconds });
          else log.debug(message, { waitedSeconds });
          return;
        }
        if (Date.now() + pauseMs >= until) {
          log.error('Temporal refused the kept result until the end: it was not delivered', {
            error: errorMessage(error),
          });
          return;
        }
        log.warn('Temporal refused the kept result; trying again', { error: errorMessage(error), pauseMs });
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 2, MAX_DELIVERY_PAUSE_MS);
      }
    }
  }
}

function send(client: Client, target: Uint8Array | FullActivityId, outcome: Outcome): Promise<void> {
  const activity = client.activity;
  if (outcome.kind === 'failed') return activity.fail(target as Uint8Array, outcome.error);
  return target instanceof Uint8Array
    ? activity.complete(target, outcome.value)
    : activity.complete(target, outcome.value);
}

function keyOf(key: ActivityKey): string {
  return `${key.runId}/${key.activityId}`;
}
