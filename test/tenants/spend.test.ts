import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { spendLedgerWorkflowId, type SpendEntry } from '../../src/shared/spend.js';
import { utcDay } from '../../src/shared/tenants.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { applySpend, emptyLedger, spendSignal, spendTotalsQuery } from '../../src/workflows/spend-ledger.js';

/** $1 per million input tokens, $2 per million output: each scripted call below costs $0.001 + $0.001. */
const prices = new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } });
const usage = { prompt_tokens: 1000, completion_tokens: 500 };
const CALL_USD = 0.002;

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let client: DurableAgentClient;

const start = (taskQueue?: string) =>
  startTestAgent({
    env,
    ...(taskQueue ? { taskQueue } : {}),
    script: () => ({ content: 'noted', usage }),
    workerOptions: { prices },
  });

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await start();
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

const entry = (conversationId: string, turn: number, round: number): SpendEntry => ({
  conversationId,
  turn,
  round,
  usd: 0.5,
  usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
});

describe('spend per tenant per UTC day', () => {
  it('ledger: an entry sent again, or one at or before its conversation’s last, is not counted again', () => {
    const state = emptyLedger('acme', '2026-11-29');
    expect(applySpend(state, entry('c1', 1, 1))).toBe(true);
    expect(applySpend(state, entry('c1', 1, 1))).toBe(false);
    expect(applySpend(state, entry('c1', 1, 2))).toBe(true);
    expect(applySpend(state, entry('c1', 1, 1))).toBe(false);
    expect(applySpend(state, entry('c1', 2, 1))).toBe(true);
    expect(applySpend(state, entry('c2', 1, 1))).toBe(true);
    expect(applySpend(state, { ...entry('c2', 1, 2), usd: null })).toBe(true);
    expect(state.totals).toMatchObject({ usd: 2, unpricedCalls: 1, calls: 5, turns: 3, conversations: 2 });
    expect(state.totals.usage.totalTokens).toBe(75);
  });

  it("spend: each tenant's calls are counted once a day, through a worker restart and a signal delivered twice", async () => {
    await client.ask('spend-1', 'one', { settings: { tenant: 'acme' } });
    await client.ask('spend-1', 'two');
    await client.ask('spend-2', 'three', { settings: { tenant: 'acme' } });
    await client.ask('spend-3', 'four', { settings: { tenant: 'globex' } });
    await client.ask('spend-none', 'five');

    // Another worker takes over: the conversation replays its history there, and its recorded ledger writes stay done.
    await agent.close();
    agent = await start(agent.taskQueue);
    await client.ask('spend-1', 'six');

    // A retried ledger write sends its signal again: nothing more is counted.
    const day = utcDay(Date.now());
    const ledger = env.client.workflow.getHandle(spendLedgerWorkflowId('acme', day));
    await ledger.signal(spendSignal, { ...entry('spend-1', 1, 1), usd: 100 });
    await ledger.query(spendTotalsQuery);

    const days = await client.spend({ since: day });
    expect(days.map(({ tenant }) => tenant)).toEqual(['acme', 'globex']);
    const [acme, globex] = days;
    expect(acme).toMatchObject({ day, calls: 4, turns: 4, conversations: 2, unpricedCalls: 0 });
    expect(acme!.usd).toBeCloseTo(4 * CALL_USD, 10);
    expect(acme!.usage).toMatchObject({ inputTokens: 4000, outputTokens: 2000, totalTokens: 6000 });
    expect(globex).toMatchObject({ day, calls: 1, turns: 1, conversations: 1 });
    expect(globex!.usd).toBeCloseTo(CALL_USD, 10);
    expect(await client.spend({ tenant: 'globex', since: day })).toEqual([globex]);
  });
});
