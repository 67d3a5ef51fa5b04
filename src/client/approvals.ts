import { ApplicationFailure, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { FailureType } from '../shared/errors.js';
import type { ApprovalDecision, ApproveRequest, DenyRequest } from '../shared/approval-messages.js';
import { approveUpdate, denyUpdate } from '../workflows/definitions.js';
import { ENDED_STATUSES, type ConversationRuns } from './conversation-runs.js';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import {
  ApprovalAlreadyDecidedError,
  ConversationEndedError,
  DurableAgentClientError,
  InvalidApprovalArgumentsError,
  UnknownApprovalError,
} from './errors.js';
import { CONVERSATION_QUERIES } from './list.js';
import type { ApproveOptions, ConversationPendingApproval, DenyOptions, ListPendingApprovalsOptions } from './types.js';

/**
 * Deciding tool calls that wait for a person (docs/approvals.md): the `approve` and `deny` updates, their refusals as
 * the client's named errors, and the pending calls of one conversation or of all. `DurableAgentClient` is the public
 * way in.
 */

/**
 * Approve a pending call: run it (with edited arguments when given), optionally allowing its tool for the rest of the
 * conversation.
 * @internal
 */
export async function approveCall(
  runs: ConversationRuns,
  conversationId: string,
  callId: string,
  options: ApproveOptions = {},
): Promise<ApprovalDecision> {
  const request: ApproveRequest = {
    callId,
    ...(options.arguments !== undefined ? { arguments: options.arguments } : {}),
    ...(options.always !== undefined ? { always: options.always } : {}),
    ...(options.maxCostUsd !== undefined ? { maxCostUsd: options.maxCostUsd } : {}),
    ...(options.by !== undefined ? { by: options.by } : {}),
  };
  return await decide(runs, conversationId, callId, (handle) =>
    handle.executeUpdate(approveUpdate, { args: [request] }),
  );
}

/**
 * Deny a pending call with a reason the model gets. A blank reason is refused here, as the conversation would.
 * @internal
 */
export async function denyCall(
  runs: ConversationRuns,
  conversationId: string,
  callId: string,
  options: DenyOptions,
): Promise<ApprovalDecision> {
  const reason = (options as { reason?: unknown }).reason;
  if (typeof reason !== 'string' || reason.trim() === '') {
    throw new InvalidApprovalArgumentsError(
      conversationId,
      callId,
      'a denial needs a reason (the model gets it and can adapt): pass a non-empty reason.',
    );
  }
  const request: DenyRequest = { callId, reason, ...(options.by !== undefined ? { by: options.by } : {}) };
  return await decide(runs, conversationId, callId, (handle) => handle.executeUpdate(denyUpdate, { args: [request] }));
}

/** Send a decision to the conversation's open run; its refusals (and a closed conversation) as named errors. */
async function decide(
  runs: ConversationRuns,
  conversationId: string,
  callId: string,
  send: (handle: ReturnType<ConversationRuns['handle']>) => Promise<ApprovalDecision>,
): Promise<ApprovalDecision> {
  const { runId, status } = await runs.describe(conversationId);
  const ended = ENDED_STATUSES[status];
  if (ended !== undefined) throw new ConversationEndedError(conversationId, ended);
  const closed = () =>
    new UnknownApprovalError(conversationId, callId, `no tool call waits: its run has closed (no turn is running).`);
  if (status === 'COMPLETED') {
    const { closedBecause, state } = await runs.outcome(conversationId, runId);
    if (closedBecause === 'ended' || state.ended) throw new ConversationEndedError(conversationId, 'ended');
  }
  if (status !== 'RUNNING') throw closed();
  try {
    return await send(runs.handle(conversationId, runId));
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw closed();
    throw refusal(conversationId, callId, error) ?? error;
  }
}

/** The conversation's refusal of a decision as the client's named error, if that is what `error` is. */
function refusal(conversationId: string, callId: string, error: unknown): Error | undefined {
  if (!(error instanceof WorkflowUpdateFailedError) || !(error.cause instanceof ApplicationFailure)) return undefined;
  const { type, message } = error.cause;
  const options = { cause: error };
  if (type === FailureType.UnknownApproval) return new UnknownApprovalError(conversationId, callId, message, options);
  if (type === FailureType.AlreadyDecided) return new ApprovalAlreadyDecidedError(conversationId, callId, options);
  if (type === FailureType.InvalidArguments) {
    return new InvalidApprovalArgumentsError(conversationId, callId, message, options);
  }
  return undefined;
}

/**
 * The pending calls of every conversation that waits for a person, found through the `DurableAgentStatus` search
 * attribute (`awaiting_approval`), then each one's status query. Visibility is eventually consistent: a call asked
 * for a moment ago may be missing, and a conversation listed whose calls were decided since contributes none.
 * @internal
 */
export async function listPendingApprovals(
  client: Client,
  pendingApprovals: (conversationId: string) => Promise<ConversationPendingApproval[]>,
  options: ListPendingApprovalsOptions = {},
): Promise<ConversationPendingApproval[]> {
  const limit = options.limit ?? 100;
  const query = [CONVERSATION_QUERIES.awaiting_approval, ...(options.query?.trim() ? [`(${options.query})`] : [])];
  const ids = new Set<string>();
  for await (const execution of client.workflow.list({ query: query.join(' AND '), pageSize: Math.min(1000, limit) })) {
    const id = execution.typedSearchAttributes.get(SearchAttribute.conversationId);
    ids.add(id ?? execution.workflowId.replace(/^conversation-/, ''));
    if (ids.size >= limit) break;
  }
  const lists = await Promise.all([...ids].map((id) => pendingApprovals(id).catch(skipClosed)));
  return lists.flat();
}

/** A conversation that closed (or went away) between the list and its status query has nothing pending. */
function skipClosed(error: unknown): ConversationPendingApproval[] {
  if (error instanceof DurableAgentClientError || error instanceof WorkflowNotFoundError) return [];
  throw error;
}
