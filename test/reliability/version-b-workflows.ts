import { upsertMemo } from '@temporalio/workflow';
import { conversationWorkflow as released } from '../../src/workflows/conversation.js';
import type { ConversationInput, ConversationOutcome } from '../../src/workflows/definitions.js';

/**
 * Version B of the Worker Versioning fault run: an incompatible change, made only for the test. Every run first records
 * a memo (a command version A never emits), so A's histories cannot replay on B (the run checks that): a conversation
 * reaches B only by continuing as new. The memo is written synchronously, so the handlers are still set in the run's
 * first activation and an `ask` that started the run finds its handler.
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationOutcome> {
  upsertMemo({ workflowCode: 'version B' });
  return await released(input);
}
