import { proxyActivities } from '@temporalio/workflow';
import type { createApplicationActivities } from './application-activities.js';

const { shipOrder } = proxyActivities<ReturnType<typeof createApplicationActivities>>({
  startToCloseTimeout: '10 seconds',
});

/** An application's own workflow, sharing a worker with the agent. */
export async function orderWorkflow(orderId: string): Promise<string> {
  return await shipOrder(orderId);
}
