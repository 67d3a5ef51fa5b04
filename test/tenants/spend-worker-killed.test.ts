import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { utcDay } from '../../src/shared/tenants.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { killAll, startCliWorker } from '../cli/helpers.js';

/**
 * Issue 45: a worker killed (SIGKILL) between a model call and its ledger write. Worker A takes one tool call at a
 * time; a slow tool call of another conversation holds that slot, so once A's model call for tenant acme is recorded,
 * its ledger write waits in Temporal. A is killed there; worker B makes the write. The call was made once and is
 * counted once.
 */

const TEST_SERVER = path.resolve('dist/testing/mcp-test-server.js');
let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let directory: string;
let cliEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = await createLocalEnvironment();
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-spend-kill-'));
  model = await startScriptedModel({
    script: (request) => {
      const question = [...request.messages].reverse().find((message) => message.role === 'user');
      const answered = request.messages.some((message) => message.role === 'tool');
      const usage = { prompt_tokens: 1000, completion_tokens: 500 };
      if (question?.content === 'slow' && !answered) {
        return { toolCalls: [{ name: 't__slow', arguments: { delayMs: 120_000 } }], usage };
      }
      // Long enough for the slow tool call to take worker A's one tool slot meanwhile.
      return { content: 'noted', usage, delayMs: question?.content === 'priced' ? 3000 : 0 };
    },
  });
  const mcp = path.join(directory, 'mcp.json');
  await fs.writeFile(mcp, JSON.stringify({ mcpServers: { t: { command: process.execPath, args: [TEST_SERVER] } } }));
  const prices = path.join(directory, 'prices.json');
  await fs.writeFile(prices, JSON.stringify({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } }));
  cliEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    DURABLE_AGENT_TASK_QUEUE: 'spend-kill',
    OPENAI_BASE_URL: model.baseUrl,
    DURABLE_AGENT_MODEL: 'scripted-model',
    DURABLE_AGENT_MCP_CONFIG: mcp,
    DURABLE_AGENT_PRICES: prices,
    DURABLE_AGENT_MAX_CONCURRENT_TOOL_CALLS: '1',
  };
});

afterAll(async () => {
  await killAll();
  await model?.close();
  await env?.teardown();
  if (directory) await fs.rm(directory, { recursive: true, force: true });
});

async function waitFor(what: string, predicate: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function eventTypes(conversationId: string): Promise<string[]> {
  const history = await env.client.workflow.getHandle(conversationWorkflowId(conversationId)).fetchHistory();
  return (history.events ?? []).map((event) => String(event.eventType));
}

it('spend: a worker killed between the model call and the ledger write; the call is made once and counted once', async () => {
  const workerA = await startCliWorker(cliEnv);
  const client = new DurableAgentClient({ client: env.client, taskQueue: 'spend-kill' });
  const priced = client.ask('kill-1', 'priced', { settings: { tenant: 'acme' } });
  await waitFor('the priced model call', async () => Promise.resolve(model.requests.length >= 1));
  void client.send('kill-slow', 'slow');
  // The model call for acme is recorded, and its ledger write scheduled but waiting: A's one tool slot is taken.
  await waitFor('the recorded model call and its scheduled ledger write', async () => {
    const types = await eventTypes('kill-1');
    const completed = types.filter((type) => /ACTIVITY_TASK_COMPLETED|^12$/.test(type)).length;
    const scheduled = types.filter((type) => /ACTIVITY_TASK_SCHEDULED|^10$/.test(type)).length;
    return completed >= 1 && scheduled >= 2;
  });
  // Not started by any worker: the write waits in Temporal when A dies.
  const pending = (await env.client.workflow.getHandle(conversationWorkflowId('kill-1')).describe()).raw
    .pendingActivities;
  expect(pending?.map((activity) => [activity.activityType?.name, String(activity.state)])).toEqual([
    ['recordSpend', String(temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED)],
  ]);
  workerA.child.kill('SIGKILL');
  await new Promise((resolve) => workerA.child.once('exit', resolve));

  await startCliWorker(cliEnv);
  await priced;
  expect(model.requestsFor(conversationWorkflowId('kill-1'))).toHaveLength(1);
  const [acme] = await client.spend({ tenant: 'acme', since: utcDay(Date.now()) });
  expect(acme).toMatchObject({ tenant: 'acme', calls: 1, turns: 1, conversations: 1 });
  expect(acme!.usd).toBeCloseTo(0.002, 10);
});
