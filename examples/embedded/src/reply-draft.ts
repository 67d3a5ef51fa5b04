import type { DurableAgentClient } from 'durable-agent';
import { z } from 'zod';

/** What the backend asks the agent for: a reply to a customer, as data it can show a person before sending. */
export const ReplyDraft = z.object({
  orderId: z.string(),
  totalDue: z.number().describe('subtotal plus shipping, in euros'),
  message: z.string(),
});
export type ReplyDraft = z.infer<typeof ReplyDraft>;

/**
 * One turn whose answer must be JSON matching `ReplyDraft`: the conversation checks it and sends a mismatch back to
 * the model, so what comes back parses (or the turn says why it does not).
 */
export async function askForReplyDraft(agent: DurableAgentClient, conversationId: string, question: string) {
  const result = await agent.ask(conversationId, question, { output: { schema: ReplyDraft, name: 'reply_draft' } });
  if (result.output === undefined) {
    throw new Error(`The agent gave no reply draft in ${conversationId} (${result.stopReason}): ${result.answer}`);
  }
  return { draft: ReplyDraft.parse(result.output), result };
}
