/** An order as the application keeps it: a type, not an interface, so TypeScript sees JSON a tool may return. */
export type Order = {
  id: string;
  customer: string;
  items: number;
  /** What the items cost, in euros. */
  subtotal: number;
  country: string;
};

/** The application's own order store: in a real application, its database. The agent's tools get it injected. */
export interface OrderStore {
  find(orderId: string): Promise<Order | undefined>;
}

/** A store held in memory: enough for the worker to run without a database, and for tests to seed. */
export function inMemoryOrderStore(orders: readonly Order[]): OrderStore {
  const byId = new Map(orders.map((order) => [order.id, order]));
  return { find: async (orderId) => byId.get(orderId) };
}
