import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import {
  AttemptHeartbeat,
  firstHeartbeatDelayMs,
  heartbeatIntervalMs,
} from '../../src/worker/activities/calls/heartbeat.js';

// Every recorded heartbeat is a write on the Temporal server and a billable action on Temporal Cloud
// (docs/capacity.md): a wait heartbeats first at half its heartbeat timeout, then every third of it.

/** Heartbeats sent while an activity with this heartbeat timeout waits `waitMs` for its call. */
async function heartbeatsDuring(heartbeatTimeoutMs: number, waitMs: number): Promise<number[]> {
  const environment = new MockActivityEnvironment({ heartbeatTimeoutMs }, { logger: new DefaultLogger('ERROR') });
  const startedAt = Date.now();
  const sentAt: number[] = [];
  environment.on('heartbeat', () => sentAt.push(Date.now() - startedAt));
  await environment.run(() => AttemptHeartbeat.of().during(new Promise((resolve) => setTimeout(resolve, waitMs))));
  return sentAt;
}

describe('the heartbeat of a waiting call', () => {
  it("the calls' 6 s timeout: first heartbeat at 3 s, then every 2 s", () => {
    expect(firstHeartbeatDelayMs(6_000)).toBe(3_000);
    expect(heartbeatIntervalMs(6_000)).toBe(2_000);
    // Without a heartbeat timeout, only cancellations need heartbeats: every 2 s from the start.
    expect(firstHeartbeatDelayMs(undefined)).toBe(2_000);
    // Never sooner than the interval.
    expect(firstHeartbeatDelayMs(150)).toBe(heartbeatIntervalMs(150));
  });

  it('a call that ends before half its heartbeat timeout records no heartbeat', async () => {
    // Timeout 1.2 s: interval 400 ms, first heartbeat at 600 ms. A 500 ms call used to record one (at 400 ms).
    expect(await heartbeatsDuring(1_200, 500)).toEqual([]);
  });

  it('a longer call heartbeats at half the timeout and then every third of it, each within the timeout', async () => {
    const sentAt = await heartbeatsDuring(1_200, 1_500);
    expect(sentAt.length).toBeGreaterThanOrEqual(2);
    expect(sentAt[0]).toBeGreaterThanOrEqual(600);
    // The first comes before the timeout, and no two are further apart than it.
    expect(sentAt[0]).toBeLessThan(1_200);
    for (let i = 1; i < sentAt.length; i++) expect(sentAt[i]! - sentAt[i - 1]!).toBeLessThan(1_200);
  });

  it('overlapping waits share one schedule, which stops when the last ends', async () => {
    const environment = new MockActivityEnvironment(
      { heartbeatTimeoutMs: 1_200 },
      { logger: new DefaultLogger('ERROR') },
    );
    let heartbeats = 0;
    environment.on('heartbeat', () => heartbeats++);
    await environment.run(async () => {
      const heartbeat = AttemptHeartbeat.of();
      const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      await Promise.all([heartbeat.during(sleep(700)), heartbeat.during(sleep(300))]);
      const atEnd = heartbeats;
      await sleep(800);
      expect(heartbeats).toBe(atEnd);
    });
    // One heartbeat (at 600 ms) for both waits, not one each.
    expect(heartbeats).toBe(1);
  });
});
