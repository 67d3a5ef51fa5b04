import { describe, expect, it } from 'vitest';
import { firstTokenFigures, type FirstTokenSample } from '../../bench/first-token/figures.js';
import { chooseContenders, readOptions } from '../../bench/options.js';
import { PLANS } from '../../bench/plan.js';
import { benchScript, parsePrompt, promptOf } from '../../bench/workload.js';

const plan = PLANS.full.firstToken;

const sample = (route: FirstTokenSample['route'], firstTokenMs: number): FirstTokenSample => ({
  route,
  toModelMs: 30,
  modelMs: 320,
  firstTokenMs,
});

describe('the first-token benchmark', () => {
  it('measures at one and fifty conversations in the full run, and at one in the quick run', () => {
    expect(plan.levels.map((level) => level.concurrency)).toEqual([1, 50]);
    expect(PLANS.quick.firstToken.levels.map((level) => level.concurrency)).toEqual([1]);
  });

  it('added = the viewer’s first token minus the model’s own, turn by turn, per route; the goal is on the median', () => {
    const met = firstTokenFigures('durable-agent', plan, 1, [
      sample('client', 360),
      sample('client', 370),
      sample('client', 500),
      sample('serve', 365),
      sample('serve', 369),
      sample('serve', 900),
    ]);
    expect(met.addedStackMs.p50).toBe(50);
    expect(met.addedServeMs.p50).toBe(49);
    expect(met.deliveryStackMs.p50).toBe(20);
    expect(met.turns).toBe(6);
    expect(met.goalMet).toBe(true);

    const missed = firstTokenFigures('durable-agent', plan, 50, [sample('client', 360), sample('serve', 371)]);
    expect(missed.addedServeMs.p50).toBe(51);
    expect(missed.goalMet).toBe(false);
  });

  it('the streamed answer: the prompt carries the chunk delay, and the script streams the answer with it', () => {
    const spec = { chain: 0, modelDelayMs: plan.modelDelayMs, chunkDelayMs: plan.chunkDelayMs };
    expect(parsePrompt(promptOf(spec))).toEqual(spec);
    expect(parsePrompt(promptOf({ chain: 10, modelDelayMs: 0 }))).toEqual({ chain: 10, modelDelayMs: 0 });
    const step = benchScript(
      { api: 'chat-completions', messages: [{ role: 'user', content: promptOf(spec) }], tools: [] } as never,
      {} as never,
    );
    expect(step).toMatchObject({ content: 'done after 0 tool calls', delayMs: 300, chunkDelayMs: 20 });
  });

  it('--first-token runs durable-agent alone and nothing but the first token; --no-first-token leaves it out', async () => {
    const only = readOptions(['--first-token']);
    expect((await chooseContenders(only)).map((definition) => definition.name)).toEqual(['durable-agent']);
    expect(only.plan.levels).toEqual([]);
    expect(only.plan.firstToken).toEqual(plan);
    expect(only.outDir).toMatch(/bench\/dist\/runs\/first-token$/);
    expect(readOptions(['--no-first-token']).plan.firstToken).toBeUndefined();
    expect(readOptions(['--first-token', '--concurrency', '50']).plan.firstToken?.levels).toEqual([
      { concurrency: 50, turns: 100 },
    ]);
    expect(() => readOptions(['--first-token', '--no-first-token'])).toThrow(/give one of them/);
  });
});
