import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import {
  countingFailedAttempts,
  failedAttempt,
  failedAttemptsBefore,
} from '../../src/worker/activities/calls/attempts.js';
import { AttemptHeartbeat } from '../../src/worker/activities/calls/heartbeat.js';
import {
  DEFAULT_MODEL_ATTEMPTS,
  errorAttemptsAllowed,
  LOST_ATTEMPTS_ALLOWED,
  maximumAttempts,
} from '../../src/workflows/attempts.js';

/** One attempt in a real activity context: what it threw or returned, and the details of its last heartbeat. */
async function runAttempt(
  info: { attempt: number; heartbeatDetails?: unknown },
  attempt: () => Promise<string>,
  options: { cancel?: boolean } = {},
): Promise<{ outcome: unknown; lastHeartbeat: unknown; heartbeats: number }> {
  const environment = new MockActivityEnvironment(info, { logger: new DefaultLogger('ERROR') });
  let heartbeats = 0;
  let lastHeartbeat: unknown = info.heartbeatDetails;
  environment.on('heartbeat', (details: unknown) => {
    heartbeats++;
    lastHeartbeat = details;
  });
  const running = environment.run(attempt);
  if (options.cancel) environment.cancel();
  const outcome = await running.catch((error: unknown) => error);
  return { outcome, lastHeartbeat, heartbeats };
}

const serverError = () =>
  ApplicationFailure.create({ type: 'ModelServerError', message: 'HTTP 500', details: [{ status: 500 }] });

describe('the error attempts of a call', () => {
  it('attempts: the count comes from the heartbeat details the attempts before recorded; anything else is 0', () => {
    expect(failedAttemptsBefore({ heartbeatDetails: { failedAttempts: 3 } })).toBe(3);
    expect(failedAttemptsBefore({ heartbeatDetails: { phase: 'sent', failedAttempts: 1 } })).toBe(1);
    for (const heartbeatDetails of [undefined, null, 7, 'x', {}, { failedAttempts: -1 }, { failedAttempts: 1.5 }]) {
      expect(failedAttemptsBefore({ heartbeatDetails })).toBe(0);
    }
  });

  it('attempts: a failed attempt records the count in its last heartbeat and stays retryable below the budget', async () => {
    const { outcome, lastHeartbeat } = await runAttempt({ attempt: 1 }, async () => {
      AttemptHeartbeat.of().set({ phase: 'not_sent', attempt: 1 });
      throw failedAttempt(Context.current(), 3, serverError());
    });
    expect(outcome).toMatchObject({ type: 'ModelServerError', nonRetryable: false });
    expect(lastHeartbeat).toEqual({ phase: 'not_sent', attempt: 1, failedAttempts: 1 });
  });

  it('attempts: the attempt that reaches the budget fails non-retryable, same type, message and details', async () => {
    const { outcome, lastHeartbeat } = await runAttempt({ attempt: 7, heartbeatDetails: { failedAttempts: 2 } }, () =>
      countingFailedAttempts(3, async () => {
        throw serverError();
      }),
    );
    expect(outcome).toBeInstanceOf(ApplicationFailure);
    expect(outcome).toMatchObject({
      type: 'ModelServerError',
      message: 'HTTP 500',
      details: [{ status: 500 }],
      nonRetryable: true,
    });
    expect(lastHeartbeat).toEqual({ failedAttempts: 3 });
  });

  it('attempts: any error counts (a bug too); the exhausted one keeps its name as the failure type', async () => {
    const { outcome } = await runAttempt({ attempt: 1 }, () =>
      countingFailedAttempts(1, async () => {
        throw new TypeError('x is undefined');
      }),
    );
    expect(outcome).toMatchObject({ type: 'TypeError', message: 'x is undefined', nonRetryable: true });
  });

  it('attempts: a cancellation (interrupt, time limit, worker shutdown) is not counted and not changed', async () => {
    const { outcome, heartbeats } = await runAttempt(
      { attempt: 2, heartbeatDetails: { failedAttempts: 4 } },
      () =>
        countingFailedAttempts(5, async () => {
          const context = Context.current();
          if (!context.cancellationSignal.aborted) {
            await new Promise((resolve) => context.cancellationSignal.addEventListener('abort', resolve));
          }
          throw context.cancellationSignal.reason;
        }),
      { cancel: true },
    );
    expect(outcome).toBeInstanceOf(CancelledFailure);
    expect(heartbeats).toBe(0);
  });

  it('attempts: a failure that is non-retryable already is passed on as it is, uncounted', async () => {
    const badRequest = ApplicationFailure.create({ type: 'ModelBadRequest', message: '400', nonRetryable: true });
    const { outcome, heartbeats } = await runAttempt({ attempt: 1 }, () =>
      countingFailedAttempts(5, async () => {
        throw badRequest;
      }),
    );
    expect(outcome).toBe(badRequest);
    expect(heartbeats).toBe(0);
  });

  it('attempts: heartbeats carry the count on, so an attempt that heartbeats and is then lost erases nothing', async () => {
    const { lastHeartbeat } = await runAttempt({ attempt: 3, heartbeatDetails: { failedAttempts: 2 } }, async () => {
      AttemptHeartbeat.of().beat({ phase: 'sent' });
      return 'lost after this';
    });
    expect(lastHeartbeat).toEqual({ phase: 'sent', failedAttempts: 2 });
    // Before any attempt failed, the details are exactly what the activity heartbeats (none: none).
    const first = await runAttempt({ attempt: 1 }, async () => {
      AttemptHeartbeat.of().beat();
      return 'ok';
    });
    expect(first.lastHeartbeat).toBeUndefined();
    expect(first.heartbeats).toBe(1);
  });

  it('attempts: errors and lost attempts in turn: only the errors use up the budget', async () => {
    // What Temporal does between attempts: the next attempt gets the last details any attempt recorded. A lost
    // attempt (its worker died) reports nothing, so its details are the ones of the attempt before it.
    const budget = 2;
    let heartbeatDetails: unknown;
    const outcomes: string[] = [];
    const plan = ['error', 'lost', 'lost', 'lost', 'error'] as const;
    for (const [index, kind] of plan.entries()) {
      const result = await runAttempt({ attempt: index + 1, heartbeatDetails }, () =>
        countingFailedAttempts(budget, async () => {
          AttemptHeartbeat.of().beat();
          if (kind === 'error') throw serverError();
          return 'the worker died here';
        }),
      );
      heartbeatDetails = result.lastHeartbeat;
      const failure = result.outcome as ApplicationFailure;
      outcomes.push(kind === 'lost' ? 'lost' : failure.nonRetryable ? 'final' : 'retry');
    }
    expect(outcomes).toEqual(['retry', 'lost', 'lost', 'lost', 'final']);
    expect(heartbeatDetails).toEqual({ failedAttempts: 2 });
  });
});

describe('the retry policy of a call', () => {
  it('attempts: a setting gives the error attempts (at least 1, whole); unset, the default', () => {
    expect(errorAttemptsAllowed(undefined, DEFAULT_MODEL_ATTEMPTS)).toBe(5);
    expect(errorAttemptsAllowed(2, DEFAULT_MODEL_ATTEMPTS)).toBe(2);
    expect(errorAttemptsAllowed(0, DEFAULT_MODEL_ATTEMPTS)).toBe(1);
    expect(errorAttemptsAllowed(-3, DEFAULT_MODEL_ATTEMPTS)).toBe(1);
    expect(errorAttemptsAllowed(2.7, DEFAULT_MODEL_ATTEMPTS)).toBe(2);
    expect(errorAttemptsAllowed(Number.NaN, DEFAULT_MODEL_ATTEMPTS)).toBe(5);
  });

  it("attempts: Temporal's maximumAttempts leaves room for attempts lost to the infrastructure", () => {
    expect(LOST_ATTEMPTS_ALLOWED).toBe(10);
    expect(maximumAttempts(5)).toBe(15);
    expect(maximumAttempts(1)).toBe(11);
  });
});
