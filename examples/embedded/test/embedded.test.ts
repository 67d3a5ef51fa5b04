import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { DurableAgentClient } from 'durable-agent';
import {
  createTimeSkippingEnvironment,
  registerSearchAttributes,
  startScriptedModel,
  type ScriptedModel,
  type ScriptStep,
} from 'durable-agent/testing';
import { McpPool } from 'durable-agent/worker';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createActivities } from '../src/activities.js';
import { agentPlugin, mcpServers } from '../src/agent.js';
import { inMemoryOrderStore } from '../src/order-store.js';
import { askForReplyDraft } from '../src/reply-draft.js';
import { emailDraftQuery, orderEmailWorkflow, orderWorkflow, reviewEmailSignal } from '../src/workflows.js';

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let mcp: McpPool;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  await registerSearchAttributes(env);
  // The steps of each workflow's turn; the model's requests carry the id of the workflow that made them.
  const conversation: ScriptStep[] = [
    // One turn: both TypeScript tools at once, then the MCP server's tool on what they returned, then the draft.
    {
      toolCalls: [
        { name: 'find_order', arguments: { orderId: 'A-17' } },
        { name: 'shipping_quote', arguments: { orderId: 'A-17' } },
      ],
    },
    { toolCalls: [{ name: 'everything__get-sum', arguments: { a: 40, b: 2 } }] },
    { content: JSON.stringify({ orderId: 'A-17', totalDue: 42, message: 'Dear Ada, you owe 42 euros.' }) },
  ];
  // The order email workflow's turn asks the shipping sub-agent, which asks for a quote.
  const emailDraft: ScriptStep[] = [
    {
      toolCalls: [
        { name: 'find_order', arguments: { orderId: 'A-17' } },
        { name: 'agent__shipping', arguments: { task: 'Shipping for order A-17?' } },
      ],
    },
    { content: 'Dear Ada, order A-17 comes to 42 euros with shipping.' },
  ];
  const shipping: ScriptStep[] = [
    { toolCalls: [{ name: 'shipping_quote', arguments: { orderId: 'A-17' } }] },
    { content: 'Shipping A-17 to NL costs 2 euros.' },
  ];
  model = await startScriptedModel({
    script: (request, { stepIndex }) =>
      (request.conversation.includes('/agent-')
        ? shipping
        : request.conversation.endsWith('/draft')
          ? emailDraft
          : conversation)[stepIndex],
  });
  mcp = new McpPool(mcpServers);
});

afterAll(async () => {
  await mcp?.close();
  await model?.close();
  await env?.teardown();
});

/** The application's worker with the agent's plugin, on its own task queue. */
function orderWorker(taskQueue: string, services: Parameters<typeof createActivities>[0]) {
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('../src/workflows.ts', import.meta.url)),
    activities: createActivities(services),
    plugins: [
      agentPlugin({
        openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
        mcp,
        orders: inMemoryOrderStore([{ id: 'A-17', customer: 'Ada', items: 2, subtotal: 40, country: 'NL' }]),
      }),
    ],
  });
}

it("runs the application's workflow and an agent turn with TypeScript and MCP tools on one worker", async () => {
  const taskQueue = `orders-${randomUUID()}`;
  const reserved: string[] = [];
  const worker = await orderWorker(taskQueue, {
    warehouse: { reserve: async (orderId) => void reserved.push(orderId) },
    mailer: { send: async () => undefined },
  });
  const agent = new DurableAgentClient({ client: env.client, taskQueue });

  const { charged, reply } = await worker.runUntil(async () => ({
    charged: await env.client.workflow.execute(orderWorkflow, {
      taskQueue,
      workflowId: `order-${randomUUID()}`,
      args: [{ id: 'A-17', items: 2 }],
    }),
    reply: await askForReplyDraft(agent, `order-${randomUUID()}`, 'Order A-17: what is due, shipping included?'),
  }));

  expect(charged).toBe('order A-17 charged');
  expect(reserved).toEqual(['A-17']);
  expect(reply.draft).toEqual({ orderId: 'A-17', totalDue: 42, message: 'Dear Ada, you owe 42 euros.' });
  expect(reply.result).toMatchObject({ stopReason: 'completed', toolCalls: 3 });
  // What reached the model: both kinds of tools and the draft's schema, then what each tool really returned.
  const [first, second, third] = model.requests.filter((request) => request.conversation.startsWith('conversation-'));
  const offered = first?.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : tool.custom.name));
  expect(offered?.sort()).toEqual([
    'agent__shipping',
    'everything__echo',
    'everything__get-sum',
    'find_order',
    'shipping_quote',
  ]);
  expect(first?.options.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'reply_draft' } });
  const toolResults = (request: typeof first) =>
    request?.messages.filter((message) => message.role === 'tool').map((message) => message.content);
  expect(toolResults(second)).toEqual([
    JSON.stringify({ id: 'A-17', customer: 'Ada', items: 2, subtotal: 40, country: 'NL' }),
    JSON.stringify({ orderId: 'A-17', euros: 2 }),
  ]);
  expect(toolResults(third)?.at(-1)).toContain('42');
});

it('an order workflow runs an agent turn as its child (which calls a sub-agent), waits for approval, then sends', async () => {
  const taskQueue = `orders-${randomUUID()}`;
  const sent: { to: string; body: string }[] = [];
  const worker = await orderWorker(taskQueue, {
    warehouse: { reserve: async () => undefined },
    mailer: { send: async (to, body) => void sent.push({ to, body }) },
  });
  const workflowId = `order-email-${randomUUID()}`;

  const outcome = await worker.runUntil(async () => {
    const order = await env.client.workflow.start(orderEmailWorkflow, {
      taskQueue,
      workflowId,
      args: [{ id: 'A-17', to: 'ada@example.com' }],
    });
    let draft: string | undefined;
    while ((draft = await order.query(emailDraftQuery)) === undefined)
      await new Promise((done) => setTimeout(done, 100));
    expect(draft).toBe('Dear Ada, order A-17 comes to 42 euros with shipping.');
    // Nothing is sent before a person approves.
    expect(sent).toEqual([]);
    await order.signal(reviewEmailSignal, { approved: true, by: 'ada@orders' });
    return await order.result();
  });

  expect(outcome).toBe('email for A-17 sent to ada@example.com');
  expect(sent).toEqual([{ to: 'ada@example.com', body: 'Dear Ada, order A-17 comes to 42 euros with shipping.' }]);
  // The turn ran as the order workflow's child, and the sub-agent as the turn's child, each with its own model calls.
  const draftRequests = model.requests.filter((request) => request.conversation === `${workflowId}/draft`);
  const shippingRequests = model.requests.filter((request) => request.conversation.startsWith(`${workflowId}/draft/`));
  expect(draftRequests[0]?.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : ''))).toEqual([
    'find_order',
    'agent__shipping',
  ]);
  expect(shippingRequests).toHaveLength(2);
  expect(draftRequests[1]?.messages.filter((message) => message.role === 'tool').map((m) => m.content)).toEqual([
    JSON.stringify({ id: 'A-17', customer: 'Ada', items: 2, subtotal: 40, country: 'NL' }),
    'Shipping A-17 to NL costs 2 euros.',
  ]);
  const draftRun = await env.client.workflow.getHandle(`${workflowId}/draft`).describe();
  expect(draftRun.parentExecution?.workflowId).toBe(workflowId);
});
