import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities } from './floor-activities.js';

const { noop, wait } = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

/**
 * The raw Temporal floor: `steps` activities in sequence that do nothing, which is what any durable loop of that many
 * steps pays. Every other step (the 1st, 3rd, … as the model calls are) waits `modelDelayMs`, like the scripted model,
 * so that turn latencies compare with the contenders' when the model takes time (drawn up to `modelDelayMaxMs` when
 * given, as the scripted model draws its delays).
 */
export async function floorWorkflow(steps: number, modelDelayMs = 0, modelDelayMaxMs?: number): Promise<number> {
  for (let step = 0; step < steps; step++) {
    if (step % 2 === 0 && modelDelayMs > 0)
      await (modelDelayMaxMs === undefined ? wait(modelDelayMs) : wait(modelDelayMs, modelDelayMaxMs));
    else await noop();
  }
  return steps;
}
