import type { Info } from '@temporalio/activity';
import { ActivityNotFoundError, type Client, type FullActivityId } from '@temporalio/client';
import { ApplicationFailure, CompleteAsyncError, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { countingFailedAttempts } from '../../src/worker/activities/calls/attempts.js';
import { FinishedWork, type KeepFinishedCall } from '../../src/worker/activities/outages/keep-finished.js';

/**
 * FinishedWork in a real activity context (MockActivityEnvironment): what an attempt does with its result when the
 * Temporal server answers, when it does not, and when a retry finds the result kept by an earlier attempt.
 */

const TOKEN = new Uint8Array([1, 2, 3]);

function info(attempt: number, more: Partial<Info> = {}): Partial<Info> {
  return {
    attempt,
    activityId: '7',
    taskToken: TOKEN,
    startToCloseTimeoutMs: 60_000,
    workflowExecution: { workflowId: 'conversation-1', runId: 'run-1' },
    ...more,
  };
}

/** Stands in for the worker's client: records what was delivered, by task token or by activity id. */
class FakeCompletions {
  readonly delivered: { target: 'token' | FullActivityId; outcome: 'completed' | 'failed'; value: unknown }[] = [];
  /** Targets that answer "not found" (the attempt timed out; the call is closed). */
  notFound = new Set<'token' | 'id'>();
  readonly client = {
    activity: {
      complete: async (target: Uint8Array | FullActivityId, value: unknown) => this.record(target, 'completed', value),
      fail: async (target: Uint8Array | FullActivityId, error: unknown) => this.record(target, 'failed', error),
    },
  } as unknown as Client;

  private record(target: Uint8Array | FullActivityId, outcome: 'completed' | 'failed', value: unknown): void {
    const kind = target instanceof Uint8Array ? 'token' : 'id';
    if (this.notFound.has(kind)) throw new ActivityNotFoundError('Not found');
    this.delivered.push({ target: target instanceof Uint8Array ? 'token' : target, outcome, value });
  }
}

/** A probe that fails while `down` is true, and answers only after `answerAfterMs` (a server coming back). */
function server() {
  const state = { down: false, closed: false, probes: 0, answerAfterMs: 0 };
  const probe = async () => {
    state.probes++;
    if (state.answerAfterMs > 0) await new Promise((resolve) => setTimeout(resolve, state.answerAfterMs));
    // The worker's connection, closed when the worker stopped.
    if (state.closed) throw Object.assign(new Error('Client already closed'), { name: 'IllegalStateError' });
    if (state.down) throw new Error('Unavailable');
  };
  return { state, probe };
}

const created: FinishedWork[] = [];
afterEach(() => {
  for (const finished of created.splice(0)) finished.gate.close();
});

function setup(options: { holderWaitMs?: number; outageHangMs?: number } = {}) {
  const temporal = server();
  const completions = new FakeCompletions();
  const finished = new FinishedWork(temporal.probe, completions.client, {
    gate: {
      retryMs: 5,
      maxRetryMs: 5,
      ...(options.outageHangMs === undefined ? {} : { outageHangMs: options.outageHangMs }),
    },
    holderWaitMs: options.holderWaitMs ?? 10_000,
  });
  created.push(finished);
  const run = <T>(
    attempt: number,
    call: Partial<KeepFinishedCall<T>>,
    work: () => Promise<T>,
    more?: Partial<Info>,
  ) => {
    const environment = new MockActivityEnvironment(info(attempt, more), { logger: new DefaultLogger('ERROR') });
    return {
      environment,
      result: environment.run<[], T, () => Promise<T>>(() => finished.run({ size: () => 10, ...call }, work)),
    };
  };
  return { temporal, completions, finished, run };
}

/** The gate saw a failed probe just now (Temporal was down), and Temporal answers again. */
async function sawOutage(temporal: ReturnType<typeof server>, finished: FinishedWork): Promise<void> {
  temporal.state.down = true;
  expect(await finished.gate.check()).toBe(false);
  temporal.state.down = false;
}

async function until(check: () => boolean): Promise<void> {
  for (let tries = 0; !check(); tries++) {
    if (tries > 500) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** An attempt that finished while Temporal did not answer: its worker keeps the result and probes, delivering nothing. */
async function keptDuringOutage() {
  const bed = setup();
  bed.temporal.state.down = true;
  await expect(bed.run(1, {}, async () => ({ content: 'tool ran' })).result).rejects.toBeInstanceOf(CompleteAsyncError);
  expect(bed.finished.pendingDeliveries).toBe(1);
  const probesWhileDown = bed.temporal.state.probes;
  await until(() => bed.temporal.state.probes > probesWhileDown + 2);
  expect(bed.finished.pendingDeliveries).toBe(1);
  expect(bed.completions.delivered).toEqual([]);
  return bed;
}

describe('FinishedWork: finished results survive a Temporal outage', () => {
  it('while Temporal answers, returns the result to the worker and keeps it for a retry', async () => {
    const { run, finished, completions } = setup();
    expect(await run(1, {}, async () => 'answer').result).toBe('answer');
    expect(finished.cache.get({ runId: 'run-1', activityId: '7' })?.value).toBe('answer');
    expect(completions.delivered).toEqual([]);
  });

  it('a retry returns the kept result without running again', async () => {
    const { run } = setup();
    await run(1, {}, async () => 'first answer').result;
    const work = vi.fn(async () => 'second answer');
    expect(await run(2, {}, work).result).toBe('first answer');
    expect(work).not.toHaveBeenCalled();
  });

  it('when Temporal does not answer, ends the attempt as async and delivers the result by task token once it is back', async () => {
    const { temporal, completions, finished } = await keptDuringOutage();
    temporal.state.down = false;
    await until(() => finished.pendingDeliveries === 0);
    expect(completions.delivered).toEqual([{ target: 'token', outcome: 'completed', value: { content: 'tool ran' } }]);
  });

  it('gives a kept result up when the worker stops before Temporal is back: nothing could send it, and the process may exit', async () => {
    const { temporal, completions, finished } = await keptDuringOutage();
    temporal.state.closed = true;
    await until(() => finished.pendingDeliveries === 0);
    expect(completions.delivered).toEqual([]);
    expect(finished.gate.stopped).toBe(true);
  });

  it('delivers a result handed to the worker too when a probe fails within 20 s, even after a probe that got an answer', async () => {
    const { run, temporal, completions, finished } = setup();
    expect(await finished.gate.check()).toBe(true);
    // Handed to the worker (sdk-core) while the server answered...
    expect(await run(1, {}, async () => 'handed over').result).toBe('handed over');
    // ...which then went down before sdk-core's report got through: the next probe fails.
    temporal.state.down = true;
    expect(await finished.gate.check()).toBe(false);
    expect(finished.pendingDeliveries).toBe(1);
    temporal.state.down = false;
    await until(() => finished.pendingDeliveries === 0);
    expect(completions.delivered).toEqual([{ target: 'token', outcome: 'completed', value: 'handed over' }]);

    // A probe answered after the hand-over: that says nothing of sdk-core's report, which it sends on its own
    // schedule (on a loaded machine, after the probe and after the server died). Delivered too.
    const later = setup();
    expect(await later.run(1, {}, async () => 'reported').result).toBe('reported');
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await later.finished.gate.check()).toBe(true);
    later.temporal.state.down = true;
    expect(await later.finished.gate.check()).toBe(false);
    expect(later.finished.pendingDeliveries).toBe(1);
    later.temporal.state.down = false;
    await until(() => later.finished.pendingDeliveries === 0);
    expect(later.completions.delivered).toEqual([{ target: 'token', outcome: 'completed', value: 'reported' }]);

    // Once delivered, a later failed probe delivers nothing again.
    later.temporal.state.down = true;
    expect(await later.finished.gate.check()).toBe(false);
    expect(later.finished.pendingDeliveries).toBe(0);
  });

  it('delivers a result handed to the worker when a probe answers only after hanging: to the retry if the attempt timed out', async () => {
    // sdk-core retries a probe through a short outage, so the probe hangs and answers once the server is back; the
    // server may have timed the attempt out meanwhile and refused sdk-core's report ("Activity not found").
    const { run, temporal, completions, finished } = setup({ outageHangMs: 50 });
    expect(await finished.gate.check()).toBe(true);
    expect(await run(1, {}, async () => 'handed over').result).toBe('handed over');
    completions.notFound.add('token');
    temporal.state.answerAfterMs = 100;
    expect(await finished.gate.check()).toBe(true);
    temporal.state.answerAfterMs = 0;
    await until(() => finished.pendingDeliveries === 0);
    expect(completions.delivered).toEqual([
      {
        target: { workflowId: 'conversation-1', runId: 'run-1', activityId: '7' },
        outcome: 'completed',
        value: 'handed over',
      },
    ]);

    // A probe that answered promptly says nothing was away: nothing is delivered.
    const quick = setup({ outageHangMs: 50 });
    expect(await quick.run(1, {}, async () => 'reported').result).toBe('reported');
    expect(await quick.finished.gate.check()).toBe(true);
    expect(quick.finished.pendingDeliveries).toBe(0);
    expect(quick.completions.delivered).toEqual([]);
  });

  it('delivers to the retry by activity id when the attempt timed out meanwhile, and stops if the call is closed', async () => {
    const { run, temporal, completions, finished } = setup();
    temporal.state.down = true;
    completions.notFound.add('token');
    await expect(run(1, {}, async () => 'answer').result).rejects.toBeInstanceOf(CompleteAsyncError);
    temporal.state.down = false;
    await until(() => finished.pendingDeliveries === 0);
    expect(completions.delivered).toEqual([
      {
        target: { workflowId: 'conversation-1', runId: 'run-1', activityId: '7' },
        outcome: 'completed',
        value: 'answer',
      },
    ]);

    const closed = setup();
    closed.temporal.state.down = true;
    closed.completions.notFound.add('token').add('id');
    await expect(closed.run(1, {}, async () => 'answer').result).rejects.toBeInstanceOf(CompleteAsyncError);
    closed.temporal.state.down = false;
    await until(() => closed.finished.pendingDeliveries === 0);
    expect(closed.completions.delivered).toEqual([]);
  });

  it('an attempt during which Temporal stopped answering delivers its result itself when it is back: to the retry if Temporal timed the attempt out', async () => {
    // The server is back and answers, but timed the attempt out as it came back: the worker's own report of the
    // result would be refused ("Activity not found on completion"), and the retry would run the call again.
    for (const outage of ['a failed probe', 'a probe that hung, then answered'] as const) {
      const { run, temporal, completions, finished } = setup();
      completions.notFound.add('token');
      let finish = () => {};
      const { result } = run(1, {}, () => new Promise<string>((resolve) => (finish = () => resolve('tool ran'))));
      await new Promise((resolve) => setTimeout(resolve, 5)); // the attempt's first probe has answered
      if (outage === 'a failed probe') await sawOutage(temporal, finished);
      else {
        temporal.state.answerAfterMs = 1_200; // longer than the gate's pendingMs (1 s)
        expect(await finished.gate.check()).toBe(true);
        temporal.state.answerAfterMs = 0;
      }
      finish();
      await expect(result, outage).rejects.toBeInstanceOf(CompleteAsyncError);
      await until(() => finished.pendingDeliveries === 0);
      expect(completions.delivered, outage).toEqual([
        {
          target: { workflowId: 'conversation-1', runId: 'run-1', activityId: '7' },
          outcome: 'completed',
          value: 'tool ran',
        },
      ]);
    }
    // An attempt that started after the outage is reported by the worker, as always.
    const { run, temporal, completions, finished } = setup();
    await sawOutage(temporal, finished);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await run(1, {}, async () => 'after').result).toBe('after');
    expect(completions.delivered).toEqual([]);
  });

  it('delivers failures only for calls that ask for it', async () => {
    const { run, temporal, completions, finished } = setup();
    temporal.state.down = true;
    const failure = new Error('content filtered');
    const failing = async (): Promise<string> => {
      throw failure;
    };
    await expect(run(1, {}, failing).result).rejects.toBe(failure);
    await expect(run(1, { deliverFailures: true }, failing).result).rejects.toBeInstanceOf(CompleteAsyncError);
    temporal.state.down = false;
    await until(() => finished.pendingDeliveries === 0);
    expect(completions.delivered).toEqual([{ target: 'token', outcome: 'failed', value: failure }]);
  });

  it('delivers a failure to its own attempt only: a retry after it must run, not be failed by it', async () => {
    const { run, temporal, completions, finished } = setup();
    temporal.state.down = true;
    completions.notFound.add('token');
    const failing = async (): Promise<string> => {
      throw new Error('rate limited');
    };
    await expect(run(1, { deliverFailures: true }, failing).result).rejects.toBeInstanceOf(CompleteAsyncError);
    temporal.state.down = false;
    await until(() => finished.pendingDeliveries === 0);
    expect(completions.delivered).toEqual([]);
  });

  it('a retry that arrives while the earlier attempt still runs on this worker waits for it and returns its result', async () => {
    const { run, finished } = setup();
    let finish: (value: string) => void = () => undefined;
    const first = run(1, {}, () => new Promise<string>((resolve) => (finish = resolve)));
    const work = vi.fn(async () => 'ran again');
    const retry = run(2, {}, work);
    await new Promise((resolve) => setTimeout(resolve, 20));
    finish('first answer');
    expect(await retry.result).toBe('first answer');
    expect(await first.result).toBe('first answer');
    expect(work).not.toHaveBeenCalled();
    expect(finished.cache.get({ runId: 'run-1', activityId: '7' })?.value).toBe('first answer');
  });

  it('a retry waiting after an outage returns a result this worker keeps meanwhile', async () => {
    const { run, temporal, finished } = setup({ holderWaitMs: 60_000 });
    await sawOutage(temporal, finished);
    const work = vi.fn(async () => 'ran again');
    const retry = run(2, {}, work);
    await new Promise((resolve) => setTimeout(resolve, 20));
    finished.cache.put({ runId: 'run-1', activityId: '7' }, 'kept meanwhile', 10, 1);
    expect(await retry.result).toBe('kept meanwhile');
    expect(work).not.toHaveBeenCalled();
  });

  it('right after an outage, a retry without a kept result first waits for the worker that may hold it', async () => {
    const work = vi.fn(async () => 'ran again');
    // No outage seen: the retry runs at once.
    const calm = setup({ holderWaitMs: 60_000 });
    expect(await calm.run(2, {}, work).result).toBe('ran again');
    expect(work).toHaveBeenCalledTimes(1);
    // An outage seen moments ago: the retry waits (20 ms here), heartbeating, then runs.
    const { run, temporal, finished } = setup({ holderWaitMs: 20 });
    await sawOutage(temporal, finished);
    expect(await run(2, {}, work).result).toBe('ran again');
    expect(work).toHaveBeenCalledTimes(2);
    // An outage shorter than sdk-core's 10 s of retries fails no probe: one answers only after hanging. The retry
    // waits the same way (here until this worker keeps the result).
    const brief = setup({ holderWaitMs: 60_000 });
    brief.temporal.state.answerAfterMs = 2_200; // longer than the gate's outageHangMs (2 s)
    expect(await brief.finished.gate.check()).toBe(true);
    brief.temporal.state.answerAfterMs = 0;
    const waiting = brief.run(2, {}, work);
    await new Promise((resolve) => setTimeout(resolve, 50));
    brief.finished.cache.put({ runId: 'run-1', activityId: '7' }, 'kept meanwhile', 10, 1);
    expect(await waiting.result).toBe('kept meanwhile');
    expect(work).toHaveBeenCalledTimes(2);
  });

  it('a retry waiting for the holder is cancelled when the holder delivers, and does not run', async () => {
    const { run, temporal, finished } = setup({ holderWaitMs: 60_000 });
    await sawOutage(temporal, finished);
    const work = vi.fn(async () => 'ran again');
    const retry = run(2, {}, work, { heartbeatTimeoutMs: 150 });
    const heartbeats: unknown[] = [];
    retry.environment.on('heartbeat', (details) => heartbeats.push(details));
    await until(() => heartbeats.length > 0);
    // The worker cancels an attempt whose heartbeat finds the activity closed (the holder delivered by activity id).
    retry.environment.cancel('NOT_FOUND');
    await expect(retry.result).rejects.toBeInstanceOf(CancelledFailure);
    expect(work).not.toHaveBeenCalled();
  });

  it('a retry waiting for an earlier attempt heartbeats what the attempts before it recorded: the count, not_sent', async () => {
    const recorded = { phase: 'not_sent', attempt: 1, failedAttempts: 1 };
    // Right after an outage: waiting for the worker that may hold the result.
    const afterOutage = setup({ holderWaitMs: 60_000 });
    await sawOutage(afterOutage.temporal, afterOutage.finished);
    const waiting = afterOutage.run(2, {}, async () => 'ran', { heartbeatDetails: recorded, heartbeatTimeoutMs: 150 });
    const heartbeats: unknown[] = [];
    waiting.environment.on('heartbeat', (details) => heartbeats.push(details));
    await until(() => heartbeats.length >= 2);
    waiting.environment.cancel('NOT_FOUND');
    await expect(waiting.result).rejects.toBeInstanceOf(CancelledFailure);
    expect(heartbeats.slice(0, 2)).toEqual([recorded, recorded]);

    // The earlier attempt still runs on this worker.
    const { run } = setup();
    let finish: (value: string) => void = () => undefined;
    const first = run(1, {}, () => new Promise<string>((resolve) => (finish = resolve)));
    const retry = run(2, {}, async () => 'ran again', { heartbeatDetails: recorded, heartbeatTimeoutMs: 150 });
    const retryHeartbeats: unknown[] = [];
    retry.environment.on('heartbeat', (details) => retryHeartbeats.push(details));
    await until(() => retryHeartbeats.length >= 2);
    finish('first answer');
    expect(await retry.result).toBe('first answer');
    expect(await first.result).toBe('first answer');
    expect(retryHeartbeats.slice(0, 2)).toEqual([recorded, recorded]);
  });

  it('modelAttempts: 2 holds across a retry lost while it waited: error, lost while waiting, error is final', async () => {
    const { run, temporal, finished } = setup({ holderWaitMs: 3_000 });
    const failing = () =>
      countingFailedAttempts(2, async (): Promise<string> => {
        throw ApplicationFailure.create({ type: 'ModelServerError', message: 'HTTP 500' });
      });
    // What Temporal keeps between attempts: the last heartbeat details an attempt recorded.
    let kept: unknown;
    const record = (environment: MockActivityEnvironment) =>
      environment.on('heartbeat', (details: unknown) => (kept = details));

    const first = run(1, {}, failing, { heartbeatTimeoutMs: 150 });
    record(first.environment);
    await expect(first.result).rejects.toMatchObject({ nonRetryable: false });
    expect(kept).toEqual({ failedAttempts: 1 });

    // The second attempt reaches the worker right after an outage and waits; its worker dies meanwhile (the test stops
    // it after its first heartbeat: nothing more of it reaches Temporal).
    await sawOutage(temporal, finished);
    const lost = run(2, {}, failing, { heartbeatDetails: kept, heartbeatTimeoutMs: 150 });
    let beats = 0;
    lost.environment.on('heartbeat', (details: unknown) => {
      if (++beats === 1) kept = details;
    });
    await until(() => beats >= 1);
    lost.environment.cancel('NOT_FOUND');
    await expect(lost.result).rejects.toBeInstanceOf(CancelledFailure);

    // The third attempt's error is the second: the call fails for good.
    const third = run(3, {}, failing, { heartbeatDetails: kept, heartbeatTimeoutMs: 150 });
    await expect(third.result).rejects.toMatchObject({ type: 'ModelServerError', nonRetryable: true });
  });
});
