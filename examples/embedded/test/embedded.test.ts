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
import { orderWorkflow } from '../src/workflows.js';

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let mcp: McpPool;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  await registerSearchAttributes(env);
  model = await startScriptedModel({
    script: [
      { toolCalls: [{ name: 'everything__get-sum', arguments: { a: 2, b: 40 } }] },
      { content: 'They add up to 42.' },
    ],
  });
  mcp = new McpPool(mcpServers);
});

afterAll(async () => {
  await mcp?.close();
  await model?.close();
  await env?.teardown();
});

it("runs the application's workflow and the agent on one worker", async () => {
  const taskQueue = `orders-${randomUUID()}`;
  const reserved: string[] = [];
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('../src/workflows.ts', import.meta.url)),
    activities: createActivities({ warehouse: { reserve: async (orderId) => void reserved.push(orderId) } }),
    plugins: [agentPlugin({ openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }), mcp })],
  });
  const agent = new DurableAgentClient({ client: env.client, taskQueue });

  const { charged, answer } = await worker.runUntil(async () => ({
    charged: await env.client.workflow.execute(orderWorkflow, {
      taskQueue,
      workflowId: `order-${randomUUID()}`,
      args: [{ id: 'A-17', items: 2 }],
    }),
    answer: await agent.ask(`order-${randomUUID()}`, 'What do 2 and 40 add up to?'),
  }));

  expect(charged).toBe('order A-17 charged');
  expect(reserved).toEqual(['A-17']);
  expect(answer).toMatchObject({ answer: 'They add up to 42.', stopReason: 'completed', toolCalls: 1 });
  // What reached the model: the MCP server's tools, then the real result of its get-sum.
  const [first, second] = model.requests;
  const offered = first?.tools?.map((tool) => (tool.type === 'function' ? tool.function.name : tool.custom.name));
  expect(offered?.sort()).toEqual(['everything__echo', 'everything__get-sum']);
  expect(second?.messages.find((message) => message.role === 'tool')?.content).toContain('42');
});
