import { levelFigures, mergeMeasured, type Measured } from './figures.js';
import { log } from './log.js';
import { Rotation, sliceTurns, type ConcurrencyLevel, type Plan } from './plan.js';
import type { RunFigures } from './results.js';
import type { RunContext } from './workbench.js';
import { CHAIN_LENGTH, type TurnSpec } from './workload.js';

/** A few turns per contender (two at a time) before anything is measured: JIT, connections, caches. */
export async function warmUp(run: RunContext, plan: Plan): Promise<void> {
  for (const contender of run.running) {
    log(`warming up ${contender.definition.name}`);
    try {
      await run.workbench.measureBatch(contender, { chain: CHAIN_LENGTH, modelDelayMs: 0 }, 2, plan.warmupTurns);
    } catch (error) {
      run.failed.add(contender.definition.name);
      run.problems.push(`${contender.definition.name}: warm-up failed: ${String(error)}`);
    }
  }
}

/** Every level of the plan at every model delay, the contenders' order rotating over the whole run. */
export async function runLevels(run: RunContext, plan: Plan): Promise<RunFigures[]> {
  const rotation = new Rotation();
  const runs: RunFigures[] = [];
  for (const modelDelayMs of plan.modelDelaysMs) {
    for (const level of plan.levels) {
      const spec = { chain: CHAIN_LENGTH, modelDelayMs };
      const measured = await runLevel(run, spec, level, rotation);
      const order = run.running.map((contender) => contender.definition.name);
      runs.push(...levelFigures(order, measured, spec, level.concurrency));
    }
  }
  return runs;
}

/** One level's turns in slices, each slice run by every contender in turn; a contender that fails drops out. */
async function runLevel(
  run: RunContext,
  spec: TurnSpec,
  level: ConcurrencyLevel,
  rotation: Rotation,
): Promise<Map<string, Measured>> {
  const turns = spec.modelDelayMs === 0 ? level.turnsWithoutDelay : level.turnsWithDelay;
  const slices = sliceTurns(turns, level.concurrency);
  const measured = new Map<string, Measured>();
  for (const [slice, turnsOfSlice] of slices.entries()) {
    for (const contender of rotation.next(run.running)) {
      const { name } = contender.definition;
      if (run.failed.has(name)) continue;
      log(
        `${name}: ${turnsOfSlice} turns, ${level.concurrency} at a time, model delay ${spec.modelDelayMs} ms` +
          (slices.length > 1 ? ` (slice ${slice + 1} of ${slices.length})` : ''),
      );
      try {
        const part = await run.workbench.measureBatch(contender, spec, level.concurrency, turnsOfSlice);
        const sofar = measured.get(name);
        measured.set(name, sofar ? mergeMeasured(sofar, part) : part);
      } catch (error) {
        run.failed.add(name);
        measured.delete(name);
        run.problems.push(
          `${name}: batch (delay ${spec.modelDelayMs}, concurrency ${level.concurrency}) failed: ${String(error)}`,
        );
      }
    }
  }
  return measured;
}
