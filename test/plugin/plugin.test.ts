import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client } from '@temporalio/client';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { durableAgentPlugin } from '../../src/worker/plugin/index.js';
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
async function askAgent(taskQueue: string, message: string, client = env.client) {
  const conversationId = randomUUID();
  const handle = await client.workflow.start(conversationWorkflow, {
    taskQueue,
    workflowId: conversationWorkflowId(conversationId),
    args: [{ conversationId, messages: [{ id: randomUUID(), content: message }], closeWhenIdle: true }],
  });
  const outcome: ConversationOutcome = await handle.result();
  return { result: outcome.state.lastResult, requests: model.requestsFor(handle.workflowId), handle };
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

  it("plugin: the application's data converter carries the conversation's payloads, its activities' signals too", async () => {
    const taskQueue = `plugin-converter-${randomUUID()}`;
    const dataConverter = { payloadCodecs: [new WrappingCodec()] };
    const client = new Client({ connection: env.connection, namespace: env.namespace ?? 'default', dataConverter });
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowsPath: applicationWorkflowsPath,
      dataConverter,
      plugins: [plugin()],
    });
    const turn = await worker.runUntil(askAgent(taskQueue, 'Say hello.', client));
    expect(turn.result?.answer).toBe('Hello from the agent.');
    const history = await turn.handle.fetchHistory();
    const encodings = new Set<string>();
    for (const event of history.events ?? []) {
      const payloads =
        event.workflowExecutionStartedEventAttributes?.input?.payloads ??
        event.activityTaskScheduledEventAttributes?.input?.payloads ??
        event.workflowExecutionSignaledEventAttributes?.input?.payloads ??
        [];
      for (const payload of payloads) encodings.add(Buffer.from(payload.metadata?.encoding ?? []).toString());
    }
    expect(history.events?.some((event) => event.workflowExecutionSignaledEventAttributes)).toBe(true);
    expect([...encodings]).toEqual([WRAPPED]);
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

const WRAPPED = 'binary/wrapped-by-application';

/** An application's own payload codec: it wraps each payload whole, so only its own decode can read it. */
class WrappingCodec implements PayloadCodec {
  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => ({
      metadata: { encoding: Buffer.from(WRAPPED) },
      data: Buffer.from(
        JSON.stringify({
          metadata: Object.fromEntries(
            Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
          ),
          data: Buffer.from(payload.data ?? []).toString('base64'),
        }),
      ),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.encoding ?? []).toString() !== WRAPPED) return payload;
      const inner = JSON.parse(Buffer.from(payload.data ?? []).toString()) as {
        metadata: Record<string, string>;
        data: string;
      };
      return {
        metadata: Object.fromEntries(
          Object.entries(inner.metadata).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
        ),
        data: Buffer.from(inner.data, 'base64'),
      };
    });
  }
}
