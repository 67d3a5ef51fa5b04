/**
 * Errors the durable-agent client raises. Each names the conversation and says what to do next; callers match on the
 * class (`instanceof`), never on the message.
 */

import { DurableAgentError } from '../shared/errors.js';
import { TENANT_SHAPE } from '../shared/tenants.js';

/** Base class of every error the client raises on purpose (a {@link DurableAgentError}). */
export class DurableAgentClientError extends DurableAgentError {
  constructor(
    message: string,
    readonly conversationId: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** No run of this conversation exists (never started, or its history is past the namespace's retention). */
export class ConversationNotFoundError extends DurableAgentClientError {
  constructor(conversationId: string, options?: ErrorOptions) {
    super(
      `Conversation ${conversationId} does not exist. Start it with send(), ask() or start() (durable-agent send).`,
      conversationId,
      options,
    );
  }
}

/** Why a conversation no longer takes messages. */
export type EndedReason = 'ended' | 'failed' | 'terminated' | 'timed out' | 'cancelled';

/** The conversation was ended (or its run failed, was terminated, timed out or was cancelled): it takes no messages. */
export class ConversationEndedError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    readonly reason: EndedReason,
    detail?: string,
    options?: ErrorOptions,
  ) {
    const how = reason === 'ended' ? 'has ended' : `has ended: its workflow run ${reason}`;
    super(
      `Conversation ${conversationId} ${how}${detail ? ` (${detail})` : ''}. Start a new conversation to continue.`,
      conversationId,
      options,
    );
  }
}

/** The message failed validation (empty, too long, a malformed id); the conversation was not touched. */
export class MessageRejectedError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    /** What was wrong with the message, as the validator put it. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`Conversation ${conversationId} rejected the message: ${reason}`, conversationId, options);
  }
}

/** The settings name a tenant id that cannot be one (docs/tenants.md); nothing was sent. */
export class InvalidTenantError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    readonly tenant: string,
    /** What is wrong with it. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(
      `Conversation ${conversationId}: the tenant ${JSON.stringify(tenant)} is not valid (${reason}); expected ` +
        `${TENANT_SHAPE}.`,
      conversationId,
      options,
    );
  }
}

/**
 * A setting of a new conversation has a value it cannot have (named by its path, e.g. `budget.onCostLimit`, or
 * `compaction` for a value it does not know or `"provider"` with a model whose API cannot compact): nothing was sent.
 */
export class InvalidSettingsError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    /** The setting, as a path: `budget.onCostLimit`. */
    readonly setting: string,
    /** What was wrong and what is expected. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`Conversation ${conversationId}: ${reason.replace(/\.$/, '')}; nothing was sent.`, conversationId, options);
  }
}

/**
 * The conversation belongs to another tenant than the one the caller acts for (docs/tenants.md); nothing changed.
 */
export class TenantMismatchError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    /** The tenant the caller acts for. */
    readonly tenant: string,
    /** The conversation's tenant; undefined for a conversation without one. */
    readonly conversationTenant: string | undefined,
    options?: ErrorOptions,
  ) {
    const owner = conversationTenant === undefined ? 'no tenant' : `tenant ${JSON.stringify(conversationTenant)}`;
    super(
      `Conversation ${conversationId} belongs to ${owner}, not to tenant ${JSON.stringify(tenant)}: use another ` +
        'conversation id, or act for its tenant.',
      conversationId,
      options,
    );
  }
}

/**
 * Temporal allows 10 updates in flight per workflow and this conversation has that many waiting asks. Raised only with
 * `onTooManyUpdates: 'throw'`; by default the client sends the message as a signal and waits for its result instead.
 */
export class TooManyUpdatesError extends DurableAgentClientError {
  constructor(conversationId: string, options?: ErrorOptions) {
    super(
      `Conversation ${conversationId} has too many asks waiting for answers (Temporal allows 10 updates in flight per ` +
        "workflow). Retry later, use send() and read the answer from status(), or leave onTooManyUpdates at 'wait'.",
      conversationId,
      options,
    );
  }
}

/** The conversation kept continuing as new for longer than the client retries (rare: a run's last turn is long). */
export class ConversationRollingOverError extends DurableAgentClientError {
  constructor(conversationId: string, attempts: number, options?: ErrorOptions) {
    super(
      `Conversation ${conversationId} was still continuing as new after ${attempts} attempts; ask again with the same ` +
        'messageId (it is answered once).',
      conversationId,
      options,
    );
  }
}

/** `ask` gave up waiting (its `waitTimeoutMs` or `signal`). The message may be queued and answered later. */
export class AskTimeoutError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    /** Ask again with this id to keep waiting for the same message's answer instead of sending it twice. */
    readonly messageId: string,
    readonly waitedMs: number,
    options?: ErrorOptions,
  ) {
    super(
      `No answer from conversation ${conversationId} within ${waitedMs} ms for message ${messageId}. The message may ` +
        'still be answered: ask again with the same messageId to keep waiting, or check that a worker is running ' +
        '(durable-agent dev / durable-agent worker) on the task queue.',
      conversationId,
      options,
    );
  }
}

/** No tool call with this id waits for a decision in the conversation (a typo, or it was never asked); nothing changed. */
export class UnknownApprovalError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    readonly callId: string,
    /** The conversation's refusal, naming the calls that do wait. */
    detail: string,
    options?: ErrorOptions,
  ) {
    super(
      `Conversation ${conversationId}: ${detail} List the calls that wait with pendingApprovals() (durable-agent ` +
        `approvals -c ${conversationId}).`,
      conversationId,
      options,
    );
  }
}

/** The tool call was decided already (by a person elsewhere, a timeout or an interrupt); nothing changed. */
export class ApprovalAlreadyDecidedError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    readonly callId: string,
    options?: ErrorOptions,
  ) {
    super(
      `Conversation ${conversationId}: the tool call ${callId} was decided already, so this decision changed nothing. ` +
        'Its decision is in the event stream (approval_decided) and in the transcript.',
      conversationId,
      options,
    );
  }
}

/**
 * The decision itself was invalid: edited arguments that do not match the tool's input schema, or a denial without a
 * reason. Nothing changed: the call still waits.
 */
export class InvalidApprovalArgumentsError extends DurableAgentClientError {
  constructor(
    conversationId: string,
    readonly callId: string,
    /** What was wrong, as the conversation put it. */
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(
      `Conversation ${conversationId} refused the decision on ${callId} (it still waits): ${reason}`,
      conversationId,
      options,
    );
  }
}
