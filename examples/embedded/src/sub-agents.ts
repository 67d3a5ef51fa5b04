import { defineSubAgent } from 'durable-agent/worker';

/**
 * An agent the others call as the tool `agent__shipping`: each call is a child workflow with its own prompt, tools and
 * budget (its limits are capped by what the calling turn has left, and what it spends is charged to that turn).
 */
export const shippingAgent = defineSubAgent({
  name: 'shipping',
  description: 'Works out what an order costs to ship. Give it the order id.',
  settings: {
    systemPrompt: 'You answer questions about shipping costs in one sentence, using your tools.',
    tools: ['shipping_quote'],
    budget: { maxToolCalls: 2 },
  },
});
