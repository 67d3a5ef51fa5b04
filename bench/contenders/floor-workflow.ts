import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities } from './floor-activities.js';

const { noop } = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

/** The raw Temporal floor: `steps` no-op activities in sequence, what any durable loop of that many steps pays. */
export async function floorWorkflow(steps: number): Promise<number> {
  for (let step = 0; step < steps; step++) await noop();
  return steps;
}
