import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from './activities.js';

const { reserveStock, chargeCard } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });

/** The application's own workflow: it shares the worker with the agent and knows nothing of it. */
export async function orderWorkflow(order: { id: string; items: number }): Promise<string> {
  await reserveStock(order.id, order.items);
  return await chargeCard(order.id);
}
