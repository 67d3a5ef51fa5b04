import { Context, log } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ConversationEndedError } from '../../client/errors.js';
import { scheduleWorkflowId } from '../../client/schedule-errors.js';
import { errorMessage } from '../../shared/errors.js';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../../shared/search-attributes.js';
import { conversationWorkflowId } from '../../workflows/definitions.js';
import type { DeliverScheduledMessageInput, ScheduledFiring } from '../../workflows/schedule-types.js';

/** The phases in which a turn runs: a firing with `overlap: skip` is dropped in them. */
const BUSY = new Set(['running', 'awaiting_approval', 'awaiting_input']);

/**
 * How a firing sends its message: `DurableAgentClient.send` on the workers' task queue. Given by the worker plugin:
 * the activities may not import the client, which imports the workflows that import the activities' types.
 */
export type ScheduledSend = (
  taskQueue: string,
  conversationId: string,
  content: string,
  options: { messageId: string; skipIfBusy: boolean; tenant?: string },
) => Promise<{ created: boolean; reopened: boolean }>;

/**
 * The `deliverScheduledMessage` activity of a schedule's firing (src/workflows/scheduled-message.ts): `send` through
 * the worker's own client, so the message creates, appends to or reopens the conversation as any client's would. The
 * firing's id is the message id: a retried attempt sends the same message, which the conversation takes once.
 */
export function createScheduleActivities(temporal: Client, send: ScheduledSend) {
  return {
    async deliverScheduledMessage(input: DeliverScheduledMessageInput): Promise<ScheduledFiring> {
      const { conversationId, messageId } = input;
      const skip = input.overlap === 'skip';
      // Say "skipped" without sending when the conversation is plainly busy. Only the first attempt looks: a retry
      // may find busy the very turn its own message started. The conversation decides again when the message
      // arrives (`skipIfBusy`), so a turn that starts in between drops it too.
      if (skip && Context.current().info.attempt === 1) {
        const busy = await busyPhase(temporal, conversationId);
        if (busy !== undefined) {
          log.info('scheduled message skipped: the conversation is busy', { conversationId, messageId, busy });
          return { outcome: 'skipped', conversationId, messageId, reason: `the conversation is ${busy}` };
        }
      }
      try {
        const sent = await send(input.taskQueue, conversationId, input.content, {
          messageId,
          skipIfBusy: skip,
          ...(input.tenant === undefined ? {} : { tenant: input.tenant }),
        });
        return { outcome: 'queued', conversationId, messageId, created: sent.created, reopened: sent.reopened };
      } catch (error) {
        if (!(error instanceof ConversationEndedError)) throw error;
        const reason = errorMessage(error);
        await pauseForEndedConversation(temporal, input, reason);
        return { outcome: 'conversation_ended', conversationId, messageId, reason };
      }
    },
  };
}

/** The busy phase of the conversation's running run, or undefined (idle, closed, or never started). */
async function busyPhase(temporal: Client, conversationId: string): Promise<string | undefined> {
  try {
    const description = await temporal.workflow.getHandle(conversationWorkflowId(conversationId)).describe();
    if (description.status.name !== 'RUNNING') return undefined;
    const phase = description.typedSearchAttributes.get(SearchAttribute.status);
    return phase !== undefined && BUSY.has(phase) ? phase : undefined;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
}

/**
 * An ended conversation takes no more messages: pause the schedule with a note that says why, so it stops firing
 * into nothing and `schedule list` and the Web UI show the reason. A pause that fails is logged; the firing's outcome
 * says the same.
 */
async function pauseForEndedConversation(
  temporal: Client,
  input: DeliverScheduledMessageInput,
  reason: string,
): Promise<void> {
  const note = `paused by durable-agent: ${reason} Delete this schedule, or point a new one at another conversation.`;
  try {
    await temporal.schedule.getHandle(scheduleWorkflowId(input.scheduleId)).pause(note);
  } catch (error) {
    log.warn('could not pause the schedule of an ended conversation', {
      scheduleId: input.scheduleId,
      error: errorMessage(error),
    });
  }
  log.warn('scheduled message not delivered: the conversation has ended', {
    conversationId: input.conversationId,
    scheduleId: input.scheduleId,
  });
}
