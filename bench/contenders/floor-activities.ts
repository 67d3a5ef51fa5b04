import { setTimeout as sleep } from 'node:timers/promises';

/** The floor's activities; `timeWork` adds up the time `wait` spends, as the contenders' model and tool time is. */
export function createFloorActivities(timeWork: <T>(work: () => Promise<T>) => Promise<T>) {
  return {
    async noop(): Promise<void> {},
    /** Stands in for a model call of `ms`. */
    async wait(ms: number): Promise<void> {
      await timeWork(() => sleep(ms));
    },
  };
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;
