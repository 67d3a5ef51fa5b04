import { describe, expect, it } from 'vitest';
import { missingFigures } from '../../bench/figures.js';
import { chooseContenders, readOptions } from '../../bench/options.js';
import { PLANS } from '../../bench/plan.js';
import type { RunFigures } from '../../bench/results.js';

const contenderNames = async (args: string[]) =>
  (await chooseContenders(readOptions(args))).map((definition) => definition.name);

describe('the quick benchmark that CI runs', () => {
  it("includes Temporal's own integration, so that CI notices when the peer's install or contender breaks", async () => {
    expect(await contenderNames(['--quick'])).toEqual([
      'in-process',
      'temporal-floor',
      'durable-agent',
      'durable-agent-encrypted',
      'openai-agents',
    ]);
  });

  it('leaves the peer out only when told to, and writes that run apart from the published one', async () => {
    expect(await contenderNames(['--no-peer'])).toEqual([
      'in-process',
      'temporal-floor',
      'durable-agent',
      'durable-agent-encrypted',
    ]);
    expect(readOptions(['--no-peer']).outDir).toMatch(/bench\/dist\/runs\/no-peer$/);
    expect(readOptions(['--quick', '--no-peer']).outDir).toMatch(/bench\/dist\/runs\/quick_no-peer$/);
  });

  it('a run fails on every contender and level without figures (a contender that dropped out of a level)', () => {
    const plan = PLANS.quick;
    const run = (contender: string, concurrency: number) => ({ contender, modelDelayMs: 0, concurrency }) as RunFigures;
    const runs = [run('temporal-floor', 1), run('temporal-floor', 10), run('openai-agents', 1)];
    expect(missingFigures(['temporal-floor'], plan, runs)).toEqual([]);
    expect(missingFigures(['temporal-floor', 'openai-agents', 'durable-agent'], plan, runs)).toEqual([
      'durable-agent at concurrency 1, model delay 0 ms',
      'openai-agents at concurrency 10, model delay 0 ms',
      'durable-agent at concurrency 10, model delay 0 ms',
    ]);
  });
});
