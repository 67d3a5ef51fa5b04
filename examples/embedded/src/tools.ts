import { createToolRegistry, defineTool, ToolError } from 'durable-agent/worker';
import { z } from 'zod';
import type { OrderStore } from './order-store.js';
import { shippingAgent } from './sub-agents.js';

/** Shipping in euros by destination; a real application would ask its carrier. */
const SHIPPING_BY_COUNTRY: Record<string, number> = { NL: 2, DE: 4 };

/**
 * The agent's TypeScript tools: they run in the worker and read the application's order store, passed in here. The
 * shipping sub-agent is offered beside them.
 */
export const orderTools = (orders: OrderStore) =>
  createToolRegistry({
    dependencies: { orders },
    tools: ({ orders }) => {
      // A ToolError is an answer the model reads and can correct (another order id), not a failure to retry.
      const existingOrder = async (orderId: string) => {
        const order = await orders.find(orderId);
        if (order === undefined) throw new ToolError(`there is no order ${orderId}`);
        return order;
      };
      const byOrderId = z.object({ orderId: z.string().describe('e.g. A-17') });
      return [
        defineTool({
          name: 'find_order',
          description: 'Find an order by its id: its customer, number of items, subtotal in euros and country.',
          parameters: byOrderId,
          annotations: { readOnlyHint: true },
          execute: ({ orderId }) => existingOrder(orderId),
        }),
        defineTool({
          name: 'shipping_quote',
          description: "The shipping cost of an order in euros, by the order's destination country.",
          parameters: byOrderId,
          annotations: { readOnlyHint: true },
          execute: async ({ orderId }) => {
            const { country } = await existingOrder(orderId);
            const euros = SHIPPING_BY_COUNTRY[country];
            if (euros === undefined) throw new ToolError(`orders to ${country} do not ship`);
            return { orderId, euros };
          },
        }),
        shippingAgent,
      ];
    },
  });
