import { DurableAgentClient } from 'durable-agent';
import { TASK_QUEUE } from './agent.js';
import { askForReplyDraft } from './reply-draft.js';

async function run() {
  const agent = await DurableAgentClient.connect({ taskQueue: TASK_QUEUE });
  try {
    const question = process.argv[2] ?? 'Order A-17: what does the customer owe, shipping included? Draft a reply.';
    const { draft } = await askForReplyDraft(agent, 'order-A-17', question);
    console.log(`To the customer of ${draft.orderId} (total due ${draft.totalDue} euros):\n${draft.message}`);
  } finally {
    await agent.close();
  }
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
