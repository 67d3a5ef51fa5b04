import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { FailureType } from '../../src/shared/errors.js';
import type { ModelCallResult } from '../../src/shared/types.js';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { type TestAgent } from '../../src/testing/agent.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';

const bed = useTimeSkippingWithCrm();

// Per million tokens: $1 input, $0.50 cached input, $2 output; so per token a millionth of that.
const prices = new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2, cache_read_mtok: 0.5 } });
const priced = (script: Parameters<typeof bed.agentWith>[0]) => bed.agentWith(script, { workerOptions: { prices } });

const findAda = { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] };
const usage = (prompt_tokens: number, completion_tokens: number) => ({ usage: { prompt_tokens, completion_tokens } });

let counter = 0;
function clientOf(agent: TestAgent) {
  return new DurableAgentClient({ client: agent.env.client, taskQueue: agent.taskQueue });
}

/** The model activity results the conversation's history recorded, in order. */
async function recordedModelResults(agent: TestAgent, workflowId: string, runId?: string): Promise<ModelCallResult[]> {
  const history = await agent.env.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const data = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
    if (!data) return [];
    const result = JSON.parse(Buffer.from(data).toString('utf8')) as Partial<ModelCallResult>;
    return result.message ? [result as ModelCallResult] : [];
  });
}

/** How many runs the conversation has had: its latest run's chain of continue-as-new, followed back to the first. */
async function runsOf(agent: TestAgent, workflowId: string): Promise<number> {
  let runId: string | undefined = (await agent.env.client.workflow.getHandle(workflowId).describe()).runId;
  let runs = 0;
  while (runId) {
    runs++;
    const history = await agent.env.client.workflow.getHandle(workflowId, runId).fetchHistory();
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
  }
  return runs;
}

/** The run's history replays on the workflow code (the cost patches' markers included) without a determinism error. */
async function expectReplays(agent: TestAgent, workflowId: string): Promise<void> {
  const history = await agent.env.client.workflow.getHandle(workflowId).fetchHistory();
  const markers = (history.events ?? []).flatMap((event) =>
    Object.values(event.markerRecordedEventAttributes?.details ?? {}).flatMap((details) =>
      (details.payloads ?? []).map((payload) => Buffer.from(payload.data ?? []).toString('utf8')),
    ),
  );
  expect(markers.join(' ')).toContain('cost-budget');
  const workflowBundle = await bundleWorkflows();
  await expect(Worker.runReplayHistory({ workflowBundle }, history, workflowId)).resolves.toBeUndefined();
}

describe('cost', () => {
  it('cost: each model call records its cost beside its usage; the turn and the conversation add them up', async () => {
    const agent = await priced([
      {
        ...findAda,
        usage: { prompt_tokens: 1_000, completion_tokens: 100, prompt_tokens_details: { cached_tokens: 200 } },
      },
      { content: 'Ada is a customer.', ...usage(2_000, 50) },
      { content: 'Still a customer.', ...usage(3_000, 0) },
    ]);
    const client = clientOf(agent);
    const conversationId = `cost-${++counter}`;

    const first = await client.ask(conversationId, 'Who is Ada?');
    // Call 1: 800 input at $1 + 200 cached at $0.50 + 100 output at $2 (per million); call 2: 2,000 and 50.
    expect(first.usage).toEqual({ inputTokens: 3_000, outputTokens: 150, totalTokens: 3_150, cacheReadTokens: 200 });
    expect(first.cost?.usd).toBeCloseTo(0.0032, 12);
    expect(first.conversationCost?.usd).toBeCloseTo(0.0032, 12);
    expect(first.cost?.unpricedCalls).toBeUndefined();

    const second = await client.ask(conversationId, 'And now?');
    expect(second.cost?.usd).toBeCloseTo(0.003, 12);
    expect(second.conversationCost?.usd).toBeCloseTo(0.0062, 12);

    const status = await client.status(conversationId);
    expect(status.cost?.usd).toBeCloseTo(0.0062, 12);
    expect(status.lastResult).toEqual(second);

    // Priced by the worker and recorded with the activity's result: replay reads the price, it never prices again.
    const costs = (await recordedModelResults(agent, status.workflowId)).map((result) => result.cost);
    expect(costs).toEqual([
      { priced: true, usd: 0.0011, inputUsd: 0.0009, source: 'configured' },
      { priced: true, usd: 0.0021, inputUsd: 0.002, source: 'configured' },
      { priced: true, usd: 0.003, inputUsd: 0.003, source: 'configured' },
    ]);
  });

  it('budget: maxCostUsd stops a tool chain before a call whose least cost would go past what is left', async () => {
    const agent = await priced([
      { ...findAda, ...usage(1_000, 100) },
      { ...findAda, ...usage(1_200, 100) },
      { content: 'Never asked for.' },
    ]);
    const findsBefore = bed.crm.calls.find_user ?? 0;

    // After call 1 the turn spent $0.0012; call 2 sends call 1's input again ($0.001 at least): $0.0022 > $0.002.
    const result = await agent.ask('Find Ada, twice', { settings: { budget: { maxCostUsd: 0.002 } } });

    expect(result).toMatchObject({ stopReason: 'budget:cost', answer: null, rounds: 1, toolCalls: 1 });
    expect(result.cost?.usd).toBeCloseTo(0.0012, 12);
    expect(result.overrun).toBeUndefined();
    expect(agent.model.requests).toHaveLength(1);
    expect((bed.crm.calls.find_user ?? 0) - findsBefore).toBe(1);
    await expectReplays(agent, `conversation-${result.conversationId}`);
  });

  it('budget: a call that costs more than was left ends the turn after it, with its overrun and no final-answer call', async () => {
    const agent = await priced([
      { ...findAda, ...usage(1_000, 100) },
      { ...findAda, ...usage(1_500, 600) },
      { content: 'Never asked for.' },
    ]);

    const result = await agent.ask('Find Ada', { settings: { budget: { maxCostUsd: 0.003 } } });

    // Call 1: $0.0012; call 2 fits the estimate ($0.0022) but costs $0.0027: $0.0039 spent.
    expect(result).toMatchObject({ stopReason: 'budget:cost', answer: null, rounds: 2, toolCalls: 2 });
    expect(result.cost?.usd).toBeCloseTo(0.0039, 12);
    expect(result.overrun?.cost).toBeCloseTo(0.0009, 12);
    expect(agent.model.requests).toHaveLength(2);
  });

  it('budget: the final-answer call of another limit is not made when it would go past the cost budget', async () => {
    const agent = await priced([{ ...findAda, ...usage(1_000, 100) }, { content: 'Never asked for.' }]);

    const result = await agent.ask('Find Ada', { settings: { budget: { maxRounds: 1, maxCostUsd: 0.002 } } });

    expect(result).toMatchObject({ stopReason: 'budget:rounds', answer: null, rounds: 1, toolCalls: 1 });
    expect(agent.model.requests).toHaveLength(1);
  });

  it('budget: the conversation budget counts every turn, across continue-as-new', async () => {
    const agent = await priced([
      { content: 'one', ...usage(2_000, 0) },
      { content: 'two', ...usage(2_500, 0) },
      { content: 'Never asked for.' },
    ]);
    const client = clientOf(agent);
    const conversationId = `conversation-budget-${++counter}`;
    const settings = { conversationBudget: { maxCostUsd: 0.005 }, maxTurnsPerRun: 1 };

    const one = await client.ask(conversationId, 'one', { settings });
    const two = await client.ask(conversationId, 'two');
    // $0.0045 spent, and the next call sends at least the last one's input ($0.0025) again: over $0.005.
    const three = await client.ask(conversationId, 'three');

    expect(one).toMatchObject({ stopReason: 'completed', turn: 1 });
    expect(two).toMatchObject({ stopReason: 'completed', turn: 2 });
    expect(two.conversationCost?.usd).toBeCloseTo(0.0045, 12);
    expect(three).toMatchObject({ stopReason: 'budget:conversationCost', turn: 3, answer: null, rounds: 0 });
    expect(three.cost).toEqual({ usd: 0 });
    expect(three.conversationCost?.usd).toBeCloseTo(0.0045, 12);
    expect(agent.model.requests).toHaveLength(2);

    // Each turn ran in a run of its own: the spend was carried across continue-as-new.
    expect(await runsOf(agent, `conversation-${conversationId}`)).toBeGreaterThanOrEqual(3);
  });

  it('cost: a model without a price costs no silent zero: the call is counted as unpriced', async () => {
    const agent = await bed.agentWith([{ content: 'Hello.', ...usage(100, 10) }]);

    const result = await agent.ask('Hello?');

    expect(result).toMatchObject({ stopReason: 'completed', cost: { usd: 0, unpricedCalls: 1 } });
    const [recorded] = await recordedModelResults(agent, `conversation-${result.conversationId}`);
    expect(recorded?.cost).toEqual({
      priced: false,
      usd: null,
      reason: expect.stringContaining('no price for model "scripted-model"'),
    });
  });

  it('budget: a cost budget on a model without a price is refused before the call, saying how to price it', async () => {
    const agent = await bed.agentWith([{ content: 'Never asked for.' }]);

    const result = await agent.ask('Hello?', { settings: { budget: { maxCostUsd: 1 } } });

    expect(result).toMatchObject({ stopReason: `error:${FailureType.ModelUnpriced}`, answer: null });
    expect(result.error?.message).toContain(
      'The conversation has a cost budget (maxCostUsd) but the worker has no price for model "scripted-model"',
    );
    expect(result.error?.message).toContain('DURABLE_AGENT_PRICES');
    expect(agent.model.requests).toHaveLength(0);
  });
});
