import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { ConversationNotFoundError } from '../../src/client/index.js';
import type { ConversationPendingApproval } from '../../src/client/types.js';
import type { TenantsConfig } from '../../src/config/tenants.js';
import type { SpendEntry } from '../../src/shared/spend.js';
import { utcDay } from '../../src/shared/tenants.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import type { ScriptFunction, ScriptStep } from '../../src/testing/scripted-model/script.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { createToolRegistry, defineSubAgent, defineTool, type ToolRegistry } from '../../src/worker/tools/index.js';
import { applySpend, emptyLedger } from '../../src/workflows/spend-ledger.js';

/**
 * Every priced call of a tenant's turn reaches the tenant's ledger of the day, once: a compaction's summary calls and a
 * sub-agent's calls as well as the turn's own rounds (docs/tenants.md).
 */

/** $1 per million input tokens, $2 per million output: each call below costs $0.001 + $0.001. */
const prices = new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } });
const usage = { prompt_tokens: 1000, completion_tokens: 500 };
const CALL_USD = 0.002;

let env: TestWorkflowEnvironment;
const agents: TestAgent[] = [];

beforeAll(async () => {
  env = await createLocalEnvironment();
});

afterAll(async () => {
  for (const agent of agents) await agent.close();
  await env?.teardown();
});

async function agentWith(script: ScriptFunction, tools?: ToolRegistry, tenants?: TenantsConfig) {
  const workerOptions = { prices, ...(tools ? { tools } : {}), ...(tenants ? { tenants } : {}) };
  const agent = await startTestAgent({ env, script, workerOptions });
  agents.push(agent);
  return { agent, client: new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue }) };
}

async function dayOf(client: DurableAgentClient, tenant: string) {
  const [totals] = await client.spend({ tenant, since: utcDay(Date.now()) });
  return totals!;
}

const entry = (conversationId: string, turn: number, round: number, agentOf?: string): SpendEntry => ({
  conversationId,
  turn,
  round,
  usd: 0.25,
  usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
  ...(agentOf !== undefined ? { agentOf } : {}),
});

describe('every priced call of a tenant reaches its ledger', () => {
  it('ledger: a sub-agent’s calls count as calls and cost, not as a conversation or a turn', () => {
    const state = emptyLedger('acme', '2026-11-29');
    expect(applySpend(state, entry('c1', 1, 1))).toBe(true);
    expect(applySpend(state, entry('c1/turn-1/agent-x', 1, 1, 'c1'))).toBe(true);
    expect(applySpend(state, entry('c1/turn-1/agent-x', 1, 2, 'c1'))).toBe(true);
    // Sent again by a retried write: still counted once.
    expect(applySpend(state, entry('c1/turn-1/agent-x', 1, 2, 'c1'))).toBe(false);
    expect(applySpend(state, entry('c1', 1, 2))).toBe(true);
    expect(state.totals).toMatchObject({ usd: 1, calls: 4, turns: 1, conversations: 1 });
  });

  it("a compaction's summary calls are in the tenant's day, as in the turn's cost", async () => {
    const { agent, client } = await agentWith(() => ({ content: 'Noted.', usage }));
    // About 300 estimated tokens each: the third message's turn passes 80% of the 1,000-token window.
    const message = (day: number) => `Day ${day}: remember this. ` + 'Keep everything I said before. '.repeat(30);
    const settings = { tenant: 'summaries', contextWindow: 1_000 };
    const results = [];
    for (const day of [1, 2, 3, 4]) {
      results.push(await client.ask('spend-summaries', message(day), day === 1 ? { settings } : {}));
    }
    const summaryCalls = agent.model.requests.filter((request) => request.idempotencyKey?.includes('/compaction-'));
    expect(summaryCalls.length).toBeGreaterThan(0);
    expect(results.reduce((sum, result) => sum + (result.compaction?.summaries ?? 0), 0)).toBeGreaterThan(0);

    const day = await dayOf(client, 'summaries');
    // Four rounds and every summary call, each counted once.
    expect(day).toMatchObject({ calls: 4 + summaryCalls.length, turns: 4, conversations: 1, unpricedCalls: 0 });
    expect(day.usd).toBeCloseTo((4 + summaryCalls.length) * CALL_USD, 10);
    expect(day.usd).toBeCloseTo(results.at(-1)!.conversationCost!.usd, 10);
  });

  it("a sub-agent's calls are in its calling conversation's tenant's day, and the conversation counts once", async () => {
    const { agent, client } = await agentWith(agentScript(parentSteps, childSteps), orderTools());
    const result = await client.ask('spend-agents', 'Where is order o-1?', { settings: { tenant: 'agents' } });
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Order o-1 has shipped.' });
    expect(agent.model.requests.filter(isChild)).toHaveLength(2);

    const day = await dayOf(client, 'agents');
    expect(day).toMatchObject({ calls: 4, turns: 1, conversations: 1, unpricedCalls: 0 });
    expect(day.usd).toBeCloseTo(4 * CALL_USD, 10);
    expect(day.usd).toBeCloseTo(result.cost!.usd, 10);
  });

  it("a sub-agent's call past the daily limit waits in the calling conversation; approved with a raise, it goes on", async () => {
    // The conversation's first call spends the whole day's $0.002.
    const tenants = { capped: { dailyCostUsd: CALL_USD, onDailyCostLimit: 'pause' as const } };
    const { agent, client } = await agentWith(agentScript(parentSteps, childSteps), orderTools(), tenants);
    const asked = client.ask('spend-capped', 'Where is order o-1?', { settings: { tenant: 'capped' } });

    const held = await heldCall(client, 'spend-capped');
    expect(held).toMatchObject({
      kind: 'budget',
      tool: 'budget:dailyCost',
      callId: expect.stringMatching(/\/budget-1-1$/),
      arguments: { limit: 'dailyCost', tenant: 'capped', limitUsd: CALL_USD },
      reason: expect.stringContaining('sub-agent orders:'),
    });
    expect(agent.model.requests.filter(isChild)).toHaveLength(0);

    await client.approve('spend-capped', held.callId, { maxCostUsd: 0.1, by: 'ops' });
    const result = await asked;
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Order o-1 has shipped.' });
    expect(agent.model.requests.filter(isChild)).toHaveLength(2);
    const day = await dayOf(client, 'capped');
    expect(day).toMatchObject({ calls: 4, turns: 1, conversations: 1, raisedLimitUsd: 0.1 });
  });

  it("a sub-agent's held call denied in the calling conversation: the sub-agent stops, and the turn's next call is held too", async () => {
    const tenants = { denied: { dailyCostUsd: CALL_USD, onDailyCostLimit: 'pause' as const } };
    const { agent, client } = await agentWith(agentScript(parentSteps, childSteps), orderTools(), tenants);
    const asked = client.ask('spend-denied', 'Where is order o-1?', { settings: { tenant: 'denied' } });

    const held = await heldCall(client, 'spend-denied');
    await client.deny('spend-denied', held.callId, { reason: 'Not today.', by: 'ops' });
    // The sub-agent's turn ended at the limit; the conversation's own next call meets it and waits.
    const next = await heldCall(client, 'spend-denied', held.callId);
    expect(next).toMatchObject({ kind: 'budget', tool: 'budget:dailyCost', callId: 'budget-1-2' });
    const transcript = await client.fullTranscript('spend-denied');
    expect(transcript.find((message) => message.role === 'tool')).toMatchObject({
      name: 'agent__orders',
      outcome: 'error',
      content: expect.stringContaining('its budget ran out (budget:dailyCost)'),
    });
    await client.deny('spend-denied', next.callId, { reason: 'Not today.' });
    expect(await asked).toMatchObject({ stopReason: 'budget:dailyCost', budgetDenied: { reason: 'Not today.' } });
    expect(agent.model.requests.filter(isChild)).toHaveLength(0);
  });
});

const isChild = (request: { conversation: string }) => request.conversation.includes('/agent-');

/** The conversation asks its sub-agent, which looks the order up and answers; then the conversation answers. */
const parentSteps = [
  { toolCalls: [{ name: 'agent__orders', arguments: { task: 'Look up order o-1.' } }], usage },
  { content: 'Order o-1 has shipped.', usage },
];
const childSteps = [
  { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'o-1' } }], usage },
  { content: 'o-1: shipped', usage },
];

function agentScript(parent: ScriptStep[], child: ScriptStep[]): ScriptFunction {
  return (request, { stepIndex }) => (isChild(request) ? child : parent)[stepIndex];
}

function orderTools(): ToolRegistry {
  return createToolRegistry({
    tools: () => [
      defineTool({
        name: 'lookup_order',
        description: 'Look up an order by id.',
        parameters: z.object({ orderId: z.string() }),
        annotations: { readOnlyHint: true },
        execute: ({ orderId }) => ({ id: orderId, status: 'shipped' }),
      }),
      defineSubAgent({ name: 'orders', description: 'Answers questions about orders.' }),
    ],
  });
}

/** The conversation's pending decision (other than `after`), once it waits (real time: the dev server skips nothing). */
async function heldCall(
  client: DurableAgentClient,
  conversationId: string,
  after?: string,
): Promise<ConversationPendingApproval> {
  for (let attempt = 0; attempt < 200; attempt++) {
    // Asked without waiting: the conversation may not have started yet.
    const pending = await client.pendingApprovals(conversationId).catch((error: unknown) => {
      if (error instanceof ConversationNotFoundError) return [];
      throw error;
    });
    const waiting = pending.find((call) => call.callId !== after);
    if (waiting) return waiting;
    await sleep(100);
  }
  throw new Error(`no decision waits in ${conversationId}`);
}
