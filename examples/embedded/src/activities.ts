/** What the activities talk to: in a real application, its database or its services. */
export interface Warehouse {
  reserve(orderId: string, items: number): Promise<void>;
}

/** How the application sends email: in a real application, its mail service. */
export interface Mailer {
  send(to: string, body: string): Promise<void>;
}

export function createActivities({ warehouse, mailer }: { warehouse: Warehouse; mailer: Mailer }) {
  return {
    async reserveStock(orderId: string, items: number): Promise<void> {
      await warehouse.reserve(orderId, items);
    },
    async chargeCard(orderId: string): Promise<string> {
      return `order ${orderId} charged`;
    },
    async sendEmail(to: string, body: string): Promise<void> {
      await mailer.send(to, body);
    },
  };
}

export type Activities = ReturnType<typeof createActivities>;
