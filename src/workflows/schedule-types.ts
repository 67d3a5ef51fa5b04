/** What a schedule's firings carry and say (src/workflows/scheduled-message.ts), shared with the worker and the client. */

/** What a schedule hands each firing (the schedule's action arguments). */
export interface ScheduledMessageInput {
  /** The schedule's id as its creator named it (`durable-agent schedule create ID`). */
  scheduleId: string;
  conversationId: string;
  /** The message each firing sends. */
  content: string;
  /** While a turn runs (or a message waits): `skip` drops the firing, `queue` queues its message. */
  overlap: ScheduleOverlap;
  /** The conversation's tenant (docs/tenants.md): a conversation the firing creates is the tenant's. */
  tenant?: string;
}

export type ScheduleOverlap = 'skip' | 'queue';

/** The delivery activity's input: the firing's input and the ids only the firing knows. */
export interface DeliverScheduledMessageInput extends ScheduledMessageInput {
  /** The firing's own workflow id, unique per schedule and scheduled time: the message's idempotency key. */
  messageId: string;
  /** The workers' task queue, where the conversation runs too. */
  taskQueue: string;
}

/** What became of one firing: the firing workflow's result, as the Web UI and `schedule list` show it. */
export type ScheduledFiring =
  | { outcome: 'queued'; conversationId: string; messageId: string; created: boolean; reopened: boolean }
  | { outcome: 'skipped'; conversationId: string; messageId: string; reason: string }
  | { outcome: 'conversation_ended'; conversationId: string; messageId: string; reason: string };
