import { describe, expect, it } from 'vitest';
import { ResultCache } from '../../src/worker/activities/outages/result-cache.js';

/** A clock the test moves by hand. */
function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const key = (activityId: string, runId = 'run-1') => ({ runId, activityId });

describe('ResultCache: the results a worker keeps for a retry of the same call', () => {
  it('returns a result only to the same run and activity id', () => {
    const cache = new ResultCache();
    cache.put(key('3'), { answer: 'kept' }, 10, 1);
    expect(cache.get(key('3'))).toEqual({ value: { answer: 'kept' }, attempt: 1 });
    expect(cache.get(key('4'))).toBeUndefined();
    expect(cache.get(key('3', 'run-2'))).toBeUndefined();
  });

  it('forgets a result after its time to live', () => {
    const time = clock();
    const cache = new ResultCache({ ttlMs: 60_000, now: time.now });
    cache.put(key('1'), 'one', 10, 1);
    time.advance(59_000);
    cache.put(key('2'), 'two', 10, 1);
    expect(cache.get(key('1'))?.value).toBe('one');
    time.advance(2_000);
    expect(cache.get(key('1'))).toBeUndefined();
    expect(cache.get(key('2'))?.value).toBe('two');
    expect(cache.size).toBe(1);
  });

  it('keeping a result again makes it the newest', () => {
    const time = clock();
    const cache = new ResultCache({ ttlMs: 60_000, now: time.now });
    cache.put(key('1'), 'first attempt', 10, 1);
    time.advance(10_000);
    cache.put(key('2'), 'other', 10, 1);
    time.advance(40_000);
    cache.put(key('1'), 'second attempt', 10, 2);
    time.advance(20_000);
    // 70 s after the first put: 2 (kept at 10 s) is gone, 1 (kept again at 50 s) is not.
    expect(cache.get(key('2'))).toBeUndefined();
    expect(cache.get(key('1'))).toEqual({ value: 'second attempt', attempt: 2 });
  });

  it('drops the oldest results beyond its entry and character limits, and keeps none over the entry size limit', () => {
    const cache = new ResultCache({ maxEntries: 3, maxChars: 100, maxEntryChars: 60 });
    for (const id of ['1', '2', '3', '4']) cache.put(key(id), id, 10, 1);
    expect(cache.get(key('1'))).toBeUndefined();
    expect(cache.size).toBe(3);
    cache.put(key('5'), 'big', 50, 1);
    cache.put(key('6'), 'big', 50, 1);
    // 4 and 5 are the oldest now; 10 + 10 + 50 + 50 is over 100 characters: the oldest go until it fits.
    expect([...['2', '3', '4', '5', '6']].filter((id) => cache.get(key(id)) !== undefined)).toEqual(['5', '6']);
    expect(cache.keptChars).toBe(100);
    cache.put(key('7'), 'too big', 61, 1);
    expect(cache.get(key('7'))).toBeUndefined();
    expect(cache.keptChars).toBe(100);
  });

  it('settleBefore drops the results of the same run scheduled before the given activity, nothing else', () => {
    const cache = new ResultCache();
    for (const id of ['1', '2', '3', '10']) cache.put(key(id), id, 10, 1);
    cache.put(key('2', 'run-2'), 'other run', 10, 1);
    cache.put(key('custom-id'), 'not a number', 10, 1);
    cache.settleBefore(key('3'));
    expect(cache.get(key('1'))).toBeUndefined();
    expect(cache.get(key('2'))).toBeUndefined();
    // The activity's own result (a retry of it) and later ones stay, as do other runs and ids that are not numbers.
    expect(cache.get(key('3'))?.value).toBe('3');
    expect(cache.get(key('10'))?.value).toBe('10');
    expect(cache.get(key('2', 'run-2'))?.value).toBe('other run');
    expect(cache.get(key('custom-id'))?.value).toBe('not a number');
    expect(cache.keptChars).toBe(40);
  });
});
