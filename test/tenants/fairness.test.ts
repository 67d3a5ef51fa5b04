import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { InvalidScheduleError } from '../../src/client/schedule-errors.js';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES } from '../../src/shared/search-attributes.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { concurrencyOptions } from '../../src/worker/concurrency.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { createFairDevServer } from '../helpers/fair-dev-server.js';

/** Tenant A's burst and tenant B's few: A's calls are queued before B's. */
const BURST = 12;
const FEW = 2;

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let client: DurableAgentClient;

beforeAll(async () => {
  // Fairness on as under `durable-agent dev` (eager activities too); one partition per task queue.
  env = await createFairDevServer();
  agent = await startTestAgent({
    env,
    // Each answer takes a moment, so the one model call at a time leaves the rest waiting in Temporal.
    script: (request) => {
      const question = [...request.messages].reverse().find((message) => message.role === 'user');
      const text = typeof question?.content === 'string' ? question.content : '';
      return { content: `answer to ${text}`, delayMs: 150 };
    },
    workerOptions: { worker: concurrencyOptions({ modelCalls: 1, toolCalls: 1 }) },
  });
  client = new DurableAgentClient({
    client: env.client,
    taskQueue: agent.taskQueue,
    tenants: { a: { weight: 1 }, b: { weight: 1 } },
  });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

describe('tenants on a dev server with fairness on', () => {
  test('a tenant is the fairness key of its conversation, with its weight, and its search attribute', async () => {
    const weighted = new DurableAgentClient({
      client: env.client,
      taskQueue: agent.taskQueue,
      tenants: { heavy: { weight: 3 } },
    });
    await weighted.ask('weighted-1', 'hello', { settings: { tenant: 'heavy' } });
    const description = await env.client.workflow.getHandle(conversationWorkflowId('weighted-1')).describe();
    expect(description.raw.workflowExecutionInfo?.priority?.fairnessKey).toBe('heavy');
    expect(description.raw.workflowExecutionInfo?.priority?.fairnessWeight).toBe(3);
    expect(description.typedSearchAttributes.get(DURABLE_AGENT_SEARCH_ATTRIBUTES.tenant)).toBe('heavy');
    expect(await weighted.tenantOf('weighted-1')).toBe('heavy');

    await client.ask('untenanted-1', 'hello');
    const plain = await env.client.workflow.getHandle(conversationWorkflowId('untenanted-1')).describe();
    expect(plain.raw.workflowExecutionInfo?.priority?.fairnessKey ?? '').toBe('');
    expect(await client.tenantOf('untenanted-1')).toBeUndefined();
  });

  test('a run started without a fairness key still schedules its model calls under its tenant', async () => {
    // A start with the tenant in its settings but no priority, as a client of the protocol may make.
    await agent.ask('hello', { conversationId: 'raw-start-1', settings: { tenant: 'raw' } });
    const handle = env.client.workflow.getHandle(conversationWorkflowId('raw-start-1'));
    expect((await handle.describe()).raw.workflowExecutionInfo?.priority?.fairnessKey ?? '').toBe('');
    const history = await handle.fetchHistory();
    const scheduled = (history.events ?? []).flatMap((event) => event.activityTaskScheduledEventAttributes ?? []);
    expect(scheduled.map((activity) => [activity.activityType?.name, activity.priority?.fairnessKey])).toEqual([
      ['callModel', 'raw'],
    ]);
  });

  test("one tenant's burst does not queue another tenant's model calls behind it", async () => {
    agent.model.reset();
    const burst = Array.from({ length: BURST }, (_, index) =>
      client.ask(`burst-a-${index}`, `a ${index}`, { settings: { tenant: 'a' } }),
    );
    // B comes once A's calls wait in Temporal: the worker runs one model call at a time.
    while (agent.model.requests.length < 1) await new Promise((resolve) => setTimeout(resolve, 20));
    const few = Array.from({ length: FEW }, (_, index) =>
      client.ask(`few-b-${index}`, `b ${index}`, { settings: { tenant: 'b' } }),
    );
    await Promise.all([...burst, ...few]);

    const order = agent.model.requests.map((request) =>
      request.conversation.startsWith('conversation-few-b') ? 'b' : 'a',
    );
    expect(order).toHaveLength(BURST + FEW);
    const lastB = order.lastIndexOf('b');
    // First in, first out, B's calls would be the last two; fairness takes turns between the tenants' backlogs.
    expect(lastB).toBeLessThan(BURST);

    const listed = await client.list({ tenant: 'b' });
    expect(listed.map((entry) => entry.conversationId).sort()).toEqual(['few-b-0', 'few-b-1']);
    expect(listed.every((entry) => entry.tenant === 'b')).toBe(true);
  });
});

describe("a schedule runs for its conversation's tenant", () => {
  test('its firings take the tenant as fairness key, and a conversation the first firing creates is the tenant’s', async () => {
    const schedules = new DurableAgentClient({
      client: env.client,
      taskQueue: agent.taskQueue,
      tenants: { night: { weight: 2 } },
    }).schedules;
    const created = await schedules.create('nightly-report', {
      conversationId: 'scheduled-night-1',
      message: 'Write the report.',
      every: '1d',
      tenant: 'night',
    });
    expect(created.tenant).toBe('night');
    await schedules.trigger('nightly-report');
    const firing = await poll(async () => (await schedules.describe('nightly-report')).recentFirings.at(-1));
    const fired = env.client.workflow.getHandle(firing.workflowId);
    expect(await fired.result()).toMatchObject({ outcome: 'queued', created: true });
    expect((await fired.describe()).raw.workflowExecutionInfo?.priority).toMatchObject({
      fairnessKey: 'night',
      fairnessWeight: 2,
    });
    expect(await client.tenantOf('scheduled-night-1')).toBe('night');
    const conversation = await env.client.workflow.getHandle(conversationWorkflowId('scheduled-night-1')).describe();
    expect(conversation.raw.workflowExecutionInfo?.priority?.fairnessKey).toBe('night');
    await schedules.delete('nightly-report');
  });

  test("a schedule without --tenant takes the conversation's; another tenant's is refused", async () => {
    await client.ask('scheduled-owned-1', 'hello', { settings: { tenant: 'a' } });
    const inherited = await client.schedules.create('owned-inherit', {
      conversationId: 'scheduled-owned-1',
      message: 'Check in.',
      every: '1d',
    });
    expect(inherited.tenant).toBe('a');
    expect((await client.schedules.list()).find((entry) => entry.scheduleId === 'owned-inherit')?.tenant).toBe('a');
    await client.schedules.delete('owned-inherit');

    const refused = client.schedules.create('owned-other', {
      conversationId: 'scheduled-owned-1',
      message: 'Check in.',
      every: '1d',
      tenant: 'b',
    });
    await expect(refused).rejects.toThrow(InvalidScheduleError);
    await expect(refused).rejects.toThrow('Conversation scheduled-owned-1 belongs to tenant "a", not "b"');
    await expect(
      client.schedules.create('bad-tenant', { conversationId: 'x', message: 'm', every: '1d', tenant: '' }),
    ).rejects.toThrow('The tenant is not valid: it is empty.');
  });
});

/** Ask `read` until it gives a value, for up to 20 s. */
async function poll<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let tries = 0; tries < 200; tries++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('nothing came in 20 s');
}
