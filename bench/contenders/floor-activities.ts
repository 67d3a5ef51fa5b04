import { setTimeout as sleep } from 'node:timers/promises';
import { drawModelDelay } from '../workload.js';

/** The floor's activities; `timeWork` adds up the time `wait` spends, as the contenders' model and tool time is. */
export function createFloorActivities(timeWork: <T>(work: () => Promise<T>) => Promise<T>) {
  return {
    async noop(): Promise<void> {},
    /** Stands in for a model call of `ms` (or drawn from `ms`–`maxMs`, as the scripted model draws its delays). */
    async wait(ms: number, maxMs?: number): Promise<void> {
      await timeWork(() => sleep(drawModelDelay({ modelDelayMs: ms, modelDelayMaxMs: maxMs })));
    },
  };
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;
