import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import type { ScheduledFiring, ScheduledMessageInput } from './schedule-types.js';

export type * from './schedule-types.js';

/**
 * A schedule's firing (docs/cli.md, "Schedules"). A Temporal Schedule can only start a workflow, so each firing starts
 * this one; its one activity signals-with-start the schedule's message into the conversation, creating or reopening it.
 * The conversation is never the schedule's action itself: it lives across firings and runs, and a schedule's start
 * would refuse it while it runs (or start a second one).
 */

const { deliverScheduledMessage } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  // A Temporal call that failed (the frontend restarting, a run between two): again, for about ten minutes; after
  // that the firing fails, visibly, and the next one tries afresh. An ended conversation is an outcome, not a failure.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 15 },
});

/** One firing of a durable-agent schedule: deliver its message once, and say what became of it. */
export async function scheduledMessageWorkflow(input: ScheduledMessageInput): Promise<ScheduledFiring> {
  // Temporal names a schedule's workflow by the action's id and the firing's scheduled time, so the id names this
  // firing and no other: as the message id, a retried delivery (or a retried firing) is one message.
  const { workflowId, taskQueue } = workflowInfo();
  return await deliverScheduledMessage({ ...input, messageId: workflowId, taskQueue });
}
