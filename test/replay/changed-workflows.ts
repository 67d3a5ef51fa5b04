import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../src/worker/activities/index.js';
import { conversationWorkflow as released } from '../../src/workflows/conversation.js';
import type { ConversationInput, ConversationOutcome } from '../../src/workflows/definitions.js';

/**
 * An incompatible change, to prove that replay catches one: the same workflow type, but every run first runs one
 * more activity (a tool call). Histories recorded before the change have no such activity, so replaying them must fail with a
 * DeterminismViolationError instead of silently taking another path.
 */
const { callTool } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });

export async function conversationWorkflow(input: ConversationInput): Promise<ConversationOutcome> {
  await callTool({
    toolCallId: 'extra',
    tool: { name: 'crm__lookup', server: 'crm', originalName: 'lookup', annotations: {}, timeoutMs: 1000 },
    arguments: {},
  });
  return await released(input);
}
