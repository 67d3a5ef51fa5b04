import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../shared/errors.js';
import type { JsonObject } from '../shared/types.js';
import { answerInputUpdate, type InputAnswer } from '../workflows/definitions.js';
import type { ConversationRuns } from './conversation-runs.js';
import { DurableAgentClientError } from './errors.js';

/** How a person answers an MCP server's question (elicitation); see docs/mcp.md. */
export interface InputAnswerOptions {
  /** `accept` (with `content` for a form), `decline`, or `cancel`. */
  action: InputAnswer['action'];
  /** The requested fields (form mode, with `accept`), checked against the server's schema. */
  content?: JsonObject;
  /** Who answers (free-form), kept in history and shown in the stream. */
  by?: string;
}

/** No question with this request id is pending (never asked, or it ended with its tool call or timed out). */
export class InputRequestNotFoundError extends DurableAgentClientError {}

/** The question was answered already (by someone else, its timeout or an interrupt); nothing changed. */
export class InputAlreadyAnsweredError extends DurableAgentClientError {}

/** The answer does not fit the question (content against the requested schema, or content with decline); nothing changed. */
export class InvalidInputError extends DurableAgentClientError {}

const ERRORS: Record<string, typeof DurableAgentClientError> = {
  [FailureType.UnknownInputRequest]: InputRequestNotFoundError,
  [FailureType.AlreadyAnswered]: InputAlreadyAnsweredError,
  [FailureType.InvalidInput]: InvalidInputError,
};

/** The `answerInput` update on the conversation's open run; its refusals become the named errors above. */
export async function answerInput(
  runs: ConversationRuns,
  conversationId: string,
  requestId: string,
  options: InputAnswerOptions,
): Promise<InputAnswer> {
  const description = await runs.describe(conversationId);
  if (description.status !== 'RUNNING') {
    throw new InputRequestNotFoundError(
      `Conversation ${conversationId} is not running, so no question of it waits for an answer.`,
      conversationId,
    );
  }
  const answer: InputAnswer = {
    requestId,
    action: options.action,
    ...(options.content !== undefined ? { content: options.content } : {}),
    ...(options.by !== undefined ? { by: options.by } : {}),
  };
  try {
    return await runs.handle(conversationId, description.runId).executeUpdate(answerInputUpdate, { args: [answer] });
  } catch (error) {
    const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
    const Named = cause instanceof ApplicationFailure && cause.type ? ERRORS[cause.type] : undefined;
    if (Named !== undefined) throw new Named(cause!.message, conversationId, { cause: error });
    throw error;
  }
}
