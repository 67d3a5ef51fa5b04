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
} from 'durable-agent/testing';
import { McpPool } from 'durable-agent/worker';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createActivities } from '../src/activities.js';
import { agentPlugin, mcpServers } from '../src/agent.js';
import { inMemoryOrderStore } from '../src/order-store.js';
import { askForReplyDraft } from '../src/reply-draft.js';
import { orderWorkflow } from '../src/workflows.js';

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let mcp: McpPool;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  await registerSearchAttributes(env);
  model = await startScriptedModel({
    script: [
      // One turn: both TypeScript tools at once, then the MCP server's tool on what they returned, then the draft.
      {
        toolCalls: [
          { name: 'find_order', arguments: { orderId: 'A-17' } },
          { name: 'shipping_quote', arguments: { orderId: 'A-17' } },
        ],
      },
      { toolCalls: [{ name: 'everything__get-sum', arguments: { a: 40, b: 2 } }] },
      { content: JSON.stringify({ orderId: 'A-17', totalDue: 42, message: 'Dear Ada, you owe 42 euros.' }) },
    ],
  });
  mcp = new McpPool(mcpServers);
});

afterAll(async () => {
  await mcp?.close();
  await model?.close();
  await env?.teardown();
});

it("runs the application's workflow and an agent turn with TypeScript and MCP tools on one worker", async () => {
  const taskQueue = `orders-${randomUUID()}`;
  const reserved: string[] = [];
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('../src/workflows.ts', import.meta.url)),
    activities: createActivities({ warehouse: { reserve: async (orderId) => void reserved.push(orderId) } }),
    plugins: [
      agentPlugin({
        openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
        mcp,
        orders: inMemoryOrderStore([{ id: 'A-17', customer: 'Ada', items: 2, subtotal: 40, country: 'NL' }]),
      }),
    ],
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
  const [first, second, third] = model.requests;
  const offered = first?.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : tool.custom.name));
  expect(offered?.sort()).toEqual(['everything__echo', 'everything__get-sum', 'find_order', 'shipping_quote']);
  expect(first?.options.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'reply_draft' } });
  const toolResults = (request: typeof first) =>
    request?.messages.filter((message) => message.role === 'tool').map((message) => message.content);
  expect(toolResults(second)).toEqual([
    JSON.stringify({ id: 'A-17', customer: 'Ada', items: 2, subtotal: 40, country: 'NL' }),
    JSON.stringify({ orderId: 'A-17', euros: 2 }),
  ]);
  expect(toolResults(third)?.at(-1)).toContain('42');
});
