import {
  condition,
  defineQuery,
  defineSignal,
  executeChild,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
// Types only: the agent's workflow runs by name, as a child, on the worker the plugin joined it to.
import type { agentTurnWorkflow } from 'durable-agent/workflows';
import type { Activities } from './activities.js';

const { reserveStock, chargeCard, sendEmail } = proxyActivities<Activities>({ startToCloseTimeout: '1 minute' });

/** The application's own workflow: it shares the worker with the agent and knows nothing of it. */
export async function orderWorkflow(order: { id: string; items: number }): Promise<string> {
  await reserveStock(order.id, order.items);
  return await chargeCard(order.id);
}

/** A person's verdict on the agent's draft. */
export const reviewEmailSignal = defineSignal<[{ approved: boolean; by: string }]>('reviewEmail');
/** The draft waiting for review; `undefined` while the agent writes it. */
export const emailDraftQuery = defineQuery<string | undefined>('emailDraft');

/** Asks the agent for an email (one agent turn, as a child workflow), waits for a person's approval, then sends it. */
export async function orderEmailWorkflow(order: { id: string; to: string }): Promise<string> {
  const email: { draft?: string; review?: { approved: boolean; by: string } } = {};
  setHandler(emailDraftQuery, () => email.draft);
  setHandler(reviewEmailSignal, (review) => void (email.review = review));
  const turn = await executeChild<typeof agentTurnWorkflow>('agentTurnWorkflow', {
    workflowId: `${workflowInfo().workflowId}/draft`,
    args: [
      {
        messages: [
          { role: 'user', content: `Write to the customer of order ${order.id}: what they owe, shipping included.` },
        ],
        settings: { systemPrompt: 'You write short, friendly emails for an order desk.', budget: { maxToolCalls: 5 } },
        // Its own tool selection: the order store's lookup and the shipping sub-agent.
        tools: ['find_order', 'agent__shipping'],
      },
    ],
  });
  if (turn.stopReason !== 'completed' || !turn.answer) return `no email for ${order.id}: ${turn.stopReason}`;
  email.draft = turn.answer;
  await condition(() => email.review !== undefined);
  if (!email.review!.approved) return `email for ${order.id} not sent: ${email.review!.by} declined it`;
  await sendEmail(order.to, email.draft);
  return `email for ${order.id} sent to ${order.to}`;
}
