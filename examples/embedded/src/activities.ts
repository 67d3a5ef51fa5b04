/** What the activities talk to: in a real application, its database or its services. */
export interface Warehouse {
  reserve(orderId: string, items: number): Promise<void>;
}

export function createActivities({ warehouse }: { warehouse: Warehouse }) {
  return {
    async reserveStock(orderId: string, items: number): Promise<void> {
      await warehouse.reserve(orderId, items);
    },
    async chargeCard(orderId: string): Promise<string> {
      return `order ${orderId} charged`;
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
