import { afterEach, describe, expect, it, vi } from 'vitest';
import { CompletionGate } from '../../src/worker/activities/outages/completion-gate.js';

/** A probe the test answers by hand: each call waits until the test settles it. */
class ManualProbe {
  readonly calls: { resolve: () => void; reject: (error: Error) => void }[] = [];
  readonly probe = () =>
    new Promise<void>((resolve, reject) => {
      this.calls.push({ resolve, reject });
    });
  answer(index = this.calls.length - 1): void {
    this.calls[index]!.resolve();
  }
  fail(index = this.calls.length - 1): void {
    this.calls[index]!.reject(new Error('Unavailable'));
  }
}

/** A probe whose answers are scripted: true answers, false fails. */
function scriptedProbe(answers: boolean[]) {
  const probe = vi.fn(async () => {
    if (!(answers.shift() ?? true)) throw new Error('Unavailable');
  });
  return probe;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('CompletionGate: does Temporal answer before a finished result is handed to the worker', () => {
  it('is open only while a recent probe succeeded and none failed since', async () => {
    let now = 0;
    const gate = new CompletionGate({ probe: scriptedProbe([true, false]), freshMs: 2_000, now: () => now });
    expect(gate.isOpen()).toBe(false);
    expect(await gate.check()).toBe(true);
    expect(gate.isOpen()).toBe(true);
    now += 2_001;
    expect(gate.isOpen()).toBe(false);
    expect(await gate.check()).toBe(false);
    expect(gate.isOpen()).toBe(false);
  });

  it('closes while a probe has waited longer than pendingMs for an answer, even after a fresh answer', async () => {
    let now = 0;
    const manual = new ManualProbe();
    const gate = new CompletionGate({ probe: manual.probe, freshMs: 3_000, pendingMs: 1_000, now: () => now });
    const first = gate.check();
    manual.answer();
    await first;
    now += 500;
    const hanging = gate.check();
    expect(gate.isOpen()).toBe(true);
    now += 1_001;
    expect(gate.isOpen()).toBe(false);
    manual.answer();
    await hanging;
    expect(gate.isOpen()).toBe(true);
  });

  it('troubledSince counts a hang past pendingMs, outageSince one past outageHangMs (a slow server is not an outage); both a failed probe', async () => {
    let now = 0;
    const manual = new ManualProbe();
    const gate = new CompletionGate({ probe: manual.probe, pendingMs: 1_000, outageHangMs: 2_000, now: () => now });
    const quick = gate.check();
    now += 10;
    manual.answer();
    await quick;
    expect(gate.troubledSince(0)).toBe(false);
    const slow = gate.check();
    now += 1_500;
    expect(gate.troubledSince(0)).toBe(true); // hanging now
    expect(gate.outageSince(0)).toBe(false);
    manual.answer();
    await slow;
    expect(gate.troubledSince(0)).toBe(true); // answered, but after hanging: the server was away meanwhile
    expect(gate.outageSince(0)).toBe(false);
    expect(gate.troubledSince(now + 1)).toBe(false);
    const away = gate.check();
    now += 2_500;
    expect(gate.outageSince(0)).toBe(true); // hanging now
    manual.answer();
    await away;
    expect(gate.outageSince(now)).toBe(true);
    expect(gate.outageSince(now + 1)).toBe(false);
    const failing = gate.check();
    now += 100;
    manual.fail();
    await failing;
    expect(gate.troubledSince(now)).toBe(true);
    expect(gate.outageSince(now)).toBe(true);
  });

  it('concurrent checks share one probe', async () => {
    const manual = new ManualProbe();
    const gate = new CompletionGate({ probe: manual.probe });
    const checks = [gate.check(), gate.check(), gate.check()];
    expect(manual.calls).toHaveLength(1);
    manual.answer();
    expect(await Promise.all(checks)).toEqual([true, true, true]);
    expect(gate.probes).toBe(1);
  });

  it('counts a probe that does not answer within probeTimeoutMs as failed', async () => {
    vi.useFakeTimers();
    const manual = new ManualProbe();
    const gate = new CompletionGate({ probe: manual.probe, probeTimeoutMs: 5_000 });
    const check = gate.check();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(await check).toBe(false);
  });

  it('waitForAnswer probes with growing pauses until the server answers', async () => {
    vi.useFakeTimers();
    const probe = scriptedProbe([false, false, false, true]);
    const gate = new CompletionGate({ probe, retryMs: 100, maxRetryMs: 300 });
    const wait = gate.waitForAnswer(Date.now() + 60_000);
    // Pauses of 100, 200 and 300 ms (the cap) between the four probes.
    await vi.advanceTimersByTimeAsync(100 + 200);
    expect(probe).toHaveBeenCalledTimes(3);
    await vi.advanceTimersByTimeAsync(300);
    expect(await wait).toMatchObject({ answered: true });
    expect(probe).toHaveBeenCalledTimes(4);
  });

  it('waitForAnswer gives up at its deadline, and at once when its signal aborts', async () => {
    vi.useFakeTimers();
    const gate = new CompletionGate({ probe: scriptedProbe(Array<boolean>(100).fill(false)), retryMs: 100 });
    const wait = gate.waitForAnswer(Date.now() + 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await wait).toMatchObject({ answered: false });

    const controller = new AbortController();
    const aborted = gate.waitForAnswer(Date.now() + 60_000, controller.signal);
    await vi.advanceTimersByTimeAsync(0);
    controller.abort();
    expect(await aborted).toMatchObject({ answered: false });
  });

  it('while activities run, one probe per refreshMs keeps it open; one per idleRefreshMs between them', async () => {
    vi.useFakeTimers();
    const probe = scriptedProbe([]);
    const gate = new CompletionGate({ probe, refreshMs: 1_000, idleRefreshMs: 5_000, freshMs: 2_000 });
    gate.enter();
    gate.enter();
    await vi.advanceTimersByTimeAsync(0);
    expect(probe).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(probe).toHaveBeenCalledTimes(6);
    expect(gate.isOpen()).toBe(true);
    gate.leave();
    gate.leave();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(probe).toHaveBeenCalledTimes(8);
    gate.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(probe).toHaveBeenCalledTimes(8);
  });

  it('watching an idle worker probes every idleRefreshMs, and stops after idleStopMs without an answer', async () => {
    vi.useFakeTimers();
    let down = false;
    const probe = vi.fn(async () => {
      if (down) throw new Error('14 UNAVAILABLE: tcp connect error');
    });
    const gate = new CompletionGate({ probe, refreshMs: 1_000, idleRefreshMs: 5_000, idleStopMs: 60_000 });
    gate.watch();
    await vi.advanceTimersByTimeAsync(60_000);
    // Answers keep it watching: one probe per 5 s.
    expect(probe).toHaveBeenCalledTimes(12);
    down = true;
    await vi.advanceTimersByTimeAsync(120_000);
    // The last answer was at 56 s; failing probes at 61 … 116 s, then it stops (more than 60 s without an answer).
    const probes = probe.mock.calls.length;
    expect(probes).toBe(24);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(probe).toHaveBeenCalledTimes(probes);
    // An activity starts it again.
    gate.enter();
    await vi.advanceTimersByTimeAsync(0);
    expect(probe).toHaveBeenCalledTimes(probes + 1);
    gate.leave();
    gate.close();
  });

  it('stops watching once the connection is closed', async () => {
    vi.useFakeTimers();
    let closed = false;
    const probe = vi.fn(async () => {
      if (closed) throw Object.assign(new Error('Client already closed'), { name: 'IllegalStateError' });
    });
    const gate = new CompletionGate({ probe, refreshMs: 1_000, idleRefreshMs: 2_000 });
    gate.watch();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(probe).toHaveBeenCalledTimes(5);
    closed = true;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(probe).toHaveBeenCalledTimes(6);
  });

  it('waitForAnswer ends once the connection is closed (the worker stopped), well before its deadline', async () => {
    vi.useFakeTimers();
    let closed = false;
    const probe = vi.fn(async () => {
      throw closed
        ? Object.assign(new Error('Client already closed'), { name: 'IllegalStateError' })
        : new Error('Unavailable');
    });
    const gate = new CompletionGate({ probe, retryMs: 100, maxRetryMs: 100 });
    let outcome: { answered: boolean } | undefined;
    void gate.waitForAnswer(Date.now() + 60 * 60_000).then((result) => (outcome = result));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(outcome).toBeUndefined();
    expect(gate.stopped).toBe(false);
    closed = true;
    await vi.advanceTimersByTimeAsync(100);
    expect(outcome).toEqual({ answered: false, waitedMs: 1_100 });
    expect(gate.stopped).toBe(true);
  });

  it('remembers a failed probe for troubledSince and outageSince, after the server answers again', async () => {
    let now = 0;
    const gate = new CompletionGate({ probe: scriptedProbe([false, true]), now: () => now });
    expect(gate.troubledSince(now - 60_000)).toBe(false);
    expect(gate.outageSince(now - 60_000)).toBe(false);
    await gate.check();
    now += 30_000;
    await gate.check();
    expect(gate.isOpen()).toBe(true);
    expect(gate.troubledSince(now - 60_000)).toBe(true);
    expect(gate.outageSince(now - 60_000)).toBe(true);
    now += 31_000;
    expect(gate.troubledSince(now - 60_000)).toBe(false);
    expect(gate.outageSince(now - 60_000)).toBe(false);
  });
});
