import { createToolRegistry, defineTool, ToolError } from 'durable-agent/worker';
import { z } from 'zod';

/** The service the tools need: the worker passes it in, so a test passes its own. */
export interface Orders {
  find(orderId: string, signal: AbortSignal): Promise<{ id: string; status: string } | undefined>;
  cancel(orderId: string, requestId: string): Promise<void>;
}

export const orderTools = (orders: Orders) =>
  createToolRegistry({
    dependencies: { orders },
    // Calls of tools not annotated read-only wait for a person (docs/approvals.md).
    requireApproval: 'writes',
    tools: ({ orders }) => [
      defineTool({
        name: 'find_order',
        description: 'Find an order by its id.',
        parameters: z.object({ orderId: z.string().describe('e.g. o-1042') }),
        annotations: { readOnlyHint: true },
        execute: async ({ orderId }, { signal }) => {
          const order = await orders.find(orderId, signal);
          // The model reads this and can correct itself; nothing is retried.
          if (order === undefined) throw new ToolError(`there is no order ${orderId}`);
          return order;
        },
      }),
      defineTool({
        name: 'cancel_order',
        description: 'Cancel an order.',
        parameters: z.object({ orderId: z.string() }),
        // The call id is the same on every attempt: the service can deduplicate by it.
        execute: async ({ orderId }, { callId }) => {
          await orders.cancel(orderId, callId);
          return `Order ${orderId} is cancelled.`;
        },
      }),
    ],
  });
