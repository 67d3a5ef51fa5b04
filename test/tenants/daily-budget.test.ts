import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import type { ConversationPendingApproval } from '../../src/client/types.js';
import { spendLedgerWorkflowId } from '../../src/shared/spend.js';
import { utcDay } from '../../src/shared/tenants.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { spendTotalsQuery } from '../../src/workflows/spend-ledger.js';

/** $1 per million input tokens, $2 per million output: each scripted call costs $0.001 + $0.001. */
const prices = new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } });
const usage = { prompt_tokens: 1000, completion_tokens: 500 };

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let client: DurableAgentClient;

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({
    env,
    script: () => ({ content: 'noted', usage }),
    workerOptions: {
      prices,
      tenants: {
        acme: { dailyCostUsd: 0.0025, onDailyCostLimit: 'pause' },
        initech: { dailyCostUsd: 0.001, onDailyCostLimit: 'pause' },
        globex: { dailyCostUsd: 0.001 },
      },
    },
  });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

/** The conversation's one pending decision, once it waits (real time: the dev server skips nothing). */
async function heldCall(conversationId: string): Promise<ConversationPendingApproval> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const [pending] = await client.pendingApprovals(conversationId);
    if (pending) return pending;
    await sleep(100);
  }
  throw new Error(`no decision waits in ${conversationId}`);
}

describe("a tenant's daily cost limit", () => {
  it('pause: the call that would pass dailyCostUsd waits; approve raises the limit for the tenant’s day', async () => {
    const day = utcDay(Date.now());
    expect((await client.ask('daily-1', 'one', { settings: { tenant: 'acme' } })).stopReason).toBe('completed');
    const before = agent.model.requests.length;

    // $0.002 spent of $0.0025; the next call costs $0.001 at least: it is held.
    await client.send('daily-1', 'two');
    const held = await heldCall('daily-1');
    expect(held).toMatchObject({
      kind: 'budget',
      tool: 'budget:dailyCost',
      turn: 2,
      arguments: { limit: 'dailyCost', tenant: 'acme', day, limitUsd: 0.0025, nextCallUsd: 0.001 },
    });
    expect((held.arguments as { spentUsd: number }).spentUsd).toBeCloseTo(0.002, 10);
    expect(held.reason).toContain("the tenant's daily cost limit (dailyCostUsd)");
    expect(agent.model.requests.length).toBe(before);

    await client.approve('daily-1', held.callId, { maxCostUsd: 0.01, by: 'ops' });
    const second = await client.ask('daily-1', 'three');
    expect(second.stopReason).toBe('completed');
    const ledger = env.client.workflow.getHandle(spendLedgerWorkflowId('acme', day));
    const totals = await ledger.query(spendTotalsQuery);
    expect(totals.raisedLimitUsd).toBe(0.01);
    expect(totals.usd).toBeCloseTo(0.006, 10);
    // The raised limit is the tenant's for the day: another of its conversations goes on without asking.
    expect((await client.ask('daily-2', 'four', { settings: { tenant: 'acme' } })).stopReason).toBe('completed');
    expect(await client.pendingApprovals('daily-2')).toEqual([]);
  });

  it('pause, then deny: the turn ends with budget:dailyCost and the decision; no model call is made', async () => {
    await client.ask('daily-3', 'one', { settings: { tenant: 'initech' } });
    const before = agent.model.requests.length;
    await client.send('daily-3', 'two');
    const held = await heldCall('daily-3');
    await client.deny('daily-3', held.callId, { reason: 'Enough for today.', by: 'finance' });
    let status = await client.status('daily-3');
    for (let attempt = 0; attempt < 100 && status.lastResult?.turn !== 2; attempt++) {
      await sleep(100);
      status = await client.status('daily-3');
    }
    expect(status.lastResult).toMatchObject({
      turn: 2,
      stopReason: 'budget:dailyCost',
      answer: null,
      rounds: 0,
      budgetDenied: { decision: 'denied', reason: 'Enough for today.', by: 'finance' },
    });
    expect(agent.model.requests.length).toBe(before);
  });

  it('fail (the default): the turn stops with budget:dailyCost before the call', async () => {
    await client.ask('daily-4', 'one', { settings: { tenant: 'globex' } });
    const before = agent.model.requests.length;
    const result = await client.ask('daily-4', 'two');
    expect(result).toMatchObject({ stopReason: 'budget:dailyCost', answer: null, rounds: 0 });
    expect(result.budgetDenied).toBeUndefined();
    expect(agent.model.requests.length).toBe(before);
    // A tenant without a daily limit is not checked.
    expect((await client.ask('daily-5', 'one', { settings: { tenant: 'hooli' } })).stopReason).toBe('completed');
    expect((await client.ask('daily-5', 'two')).stopReason).toBe('completed');
  });
});
