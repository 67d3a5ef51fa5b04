/** An application's own activities, registered on the same worker as the agent's. */
export function createApplicationActivities() {
  return {
    async shipOrder(orderId: string): Promise<string> {
      return `shipped ${orderId}`;
    },
  };
}
