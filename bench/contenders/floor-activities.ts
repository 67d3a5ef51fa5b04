export function createFloorActivities() {
  return {
    async noop(): Promise<void> {},
  };
}

export type FloorActivities = ReturnType<typeof createFloorActivities>;
