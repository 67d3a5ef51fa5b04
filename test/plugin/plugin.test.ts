import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { durableAgentPlugin } from '../../src/plugin/index.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { registerSearchAttributes } from '../../src/testing/agent.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { conversationWorkflow } from '../../src/workflows/conversation.js';
import { conversationWorkflowId, type ConversationOutcome } from '../../src/workflows/definitions.js';
import { parseEncryptionKeys } from '../../src/codec/keys.js';
import { createApplicationActivities } from './application-activities.js';
import { orderWorkflow } from './application-workflows.js';

const applicationWorkflowsPath = fileURLToPath(new URL('./application-workflows.ts', import.meta.url));

let env: TestWorkflowEnvironment;
let model: ScriptedModel;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  await registerSearchAttributes(env);
  model = await startScriptedModel({ script: [{ content: 'Hello from the agent.' }] });
});

afterAll(async () => {
  await model?.close();
  await env?.teardown();
});

function plugin() {
  return durableAgentPlugin({
    openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
    defaultModel: 'scripted-model',
  });
}

/** One conversation turn on the worker's task queue, to its result. */
async function askAgent(taskQueue: string, message: string) {
  const conversationId = randomUUID();
  const handle = await env.client.workflow.start(conversationWorkflow, {
    taskQueue,
    workflowId: conversationWorkflowId(conversationId),
    args: [{ conversationId, messages: [{ id: randomUUID(), content: message }], closeWhenIdle: true }],
  });
  const outcome: ConversationOutcome = await handle.result();
  return { result: outcome.state.lastResult, requests: model.requestsFor(handle.workflowId) };
}

async function runBoth(worker: Worker, taskQueue: string) {
  return await worker.runUntil(async () => {
    const shipped = await env.client.workflow.execute(orderWorkflow, {
      taskQueue,
      workflowId: `order-${randomUUID()}`,
      args: ['A-17'],
    });
    const turn = await askAgent(taskQueue, 'Say hello.');
    return { shipped, turn };
  });
}

describe('durableAgentPlugin', () => {
  it("plugin: the application's workflowsPath keeps its workflows and activities and gains the conversation", async () => {
    const taskQueue = `plugin-${randomUUID()}`;
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: applicationWorkflowsPath,
      activities: createApplicationActivities(),
      plugins: [plugin()],
    });
    const { shipped, turn } = await runBoth(worker, taskQueue);
    expect(shipped).toBe('shipped A-17');
    expect(turn.result).toMatchObject({ answer: 'Hello from the agent.', stopReason: 'completed' });
    expect(turn.requests).toHaveLength(1);
    expect(turn.requests[0]?.messages.at(-1)).toMatchObject({ role: 'user', content: 'Say hello.' });
  });

  it('plugin: a bundle prebuilt with the plugin holds both workflow modules', async () => {
    const taskQueue = `plugin-bundle-${randomUUID()}`;
    const agent = plugin();
    const workflowBundle = await bundleWorkflowCode({ workflowsPath: applicationWorkflowsPath, plugins: [agent] });
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle,
      activities: createApplicationActivities(),
      plugins: [agent],
    });
    const { shipped, turn } = await runBoth(worker, taskQueue);
    expect(shipped).toBe('shipped A-17');
    expect(turn.result?.answer).toBe('Hello from the agent.');
  });

  it('plugin: encryption keys and a data converter of the worker are refused, saying which to pass', async () => {
    const parsed = parseEncryptionKeys(`k1:${Buffer.alloc(32, 7).toString('base64')}`);
    if (!('keys' in parsed)) throw new Error('test key did not parse');
    const keyed = durableAgentPlugin({
      openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
      defaultModel: 'scripted-model',
      encryptionKeys: parsed.keys,
    });
    await expect(
      Worker.create({
        connection: env.nativeConnection,
        taskQueue: `plugin-keys-${randomUUID()}`,
        workflowsPath: applicationWorkflowsPath,
        dataConverter: { payloadCodecs: [] },
        plugins: [keyed],
      }),
    ).rejects.toThrow(/encryptionKeys.*dataConverter of its own/);
  });
});
