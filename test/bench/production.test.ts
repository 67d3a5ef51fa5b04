import { describe, expect, it } from 'vitest';
import { billableInHistory, NO_ACTIONS } from '../../bench/production/actions.js';
import { SECTION_BEGIN, SECTION_END, spliceSection } from '../../bench/production/report.js';
import { difference } from '../../bench/production/sample.js';
import { drawModelDelay, parsePrompt, promptOf } from '../../bench/workload.js';

describe('bench --stack production', () => {
  it('bills what Temporal Server’s action estimator bills: a child twice, markers once per workflow task', () => {
    const actions = {
      ...NO_ACTIONS,
      events: 100,
      workflowStarts: 1,
      activityAttempts: 21,
      timers: 1,
      signals: 1,
      updates: 2,
      childWorkflows: 1,
      upserts: 2,
      markers: 3,
      markerBatches: 1,
    };
    expect(billableInHistory(actions)).toBe(1 + 21 + 1 + 1 + 2 + 2 + 2 + 1);
  });

  it('replaces its section of docs/benchmarks.md, or puts it before the notes', () => {
    const section = (text: string) => `${SECTION_BEGIN}\n${text}\n${SECTION_END}`;
    const fresh = spliceSection('# Benchmarks\n\n## History\n\n## Notes\n\nnotes\n', section('one'));
    expect(fresh).toBe(`# Benchmarks\n\n## History\n\n${section('one')}\n\n## Notes\n\nnotes\n`);
    expect(spliceSection(fresh, section('two'))).toBe(fresh.replace('one', 'two'));
  });

  it('counts counters that appear during a phase from zero', () => {
    expect(difference({ a: 5, b: 2, c: 1 }, { a: 3, c: 1 })).toEqual({ a: 2, b: 2 });
  });

  it('draws the model’s delay from the range in the prompt, and keeps a single delay as it was', () => {
    const spec = { chain: 10, modelDelayMs: 1_000, modelDelayMaxMs: 4_000 };
    expect(promptOf(spec, '3')).toBe('bench chain=10 delay=1000-4000 #3');
    expect(parsePrompt(promptOf(spec))).toEqual(spec);
    expect(parsePrompt('bench chain=2 delay=200 chunk=20')).toEqual({ chain: 2, modelDelayMs: 200, chunkDelayMs: 20 });
    for (let draw = 0; draw < 100; draw++) {
      const delay = drawModelDelay(spec);
      expect(delay).toBeGreaterThanOrEqual(1_000);
      expect(delay).toBeLessThanOrEqual(4_000);
    }
    expect(drawModelDelay({ modelDelayMs: 200 })).toBe(200);
  });
});
