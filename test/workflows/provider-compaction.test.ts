import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { codeWord, fact, QUESTION } from '../helpers/code-words.js';
import type { RecordedRequest, ScriptFunction, ScriptedModelOptions } from '../../src/testing/scripted-model/index.js';
import { scriptedCompactionSummary, startScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { AssistantMessage } from '../../src/shared/types.js';
import { askUpdate, transcriptQuery, type ConversationSettings } from '../../src/workflows/definitions.js';
import type { TurnResult } from '../../src/workflows/turn-result.js';
import { DurableAgentClient, InvalidSettingsError } from '../../src/client/index.js';
import { FailureType } from '../../src/shared/errors.js';
import { createToolRegistry, defineTool } from '../../src/worker/tools/index.js';

/**
 * Provider-native compaction (`settings.compaction: "provider"`, docs/models.md#provider-native-compaction) against
 * the scripted model, through the real SDKs and a real Temporal server: the provider compacts when the input passes
 * the threshold the workflow derived from the window, its compaction item is kept in the transcript and sent back,
 * and durable-agent makes no summary of its own.
 */

let env: TestWorkflowEnvironment;
const agents: TestAgent[] = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.close()));
  await env?.teardown();
});

const FILLER =
  ' I am telling you this in the middle of a long and busy day, between meetings about budgets, travel plans, the ' +
  'garden, a leaking tap in the kitchen, the car that needs new tyres and a birthday present I still have to buy. ' +
  'Please keep it in mind, because I will ask you about it later, and I will not say it again.';

/** A request's text with the scripted compaction items' summaries decoded (the Responses API's are opaque). */
function requestText(request: RecordedRequest): string {
  const input = Array.isArray(request.body.input) ? request.body.input : [];
  const summaries = input.flatMap((item) =>
    typeof item === 'object' && item !== null && !Array.isArray(item) && typeof item.encrypted_content === 'string'
      ? [scriptedCompactionSummary(item.encrypted_content) ?? '']
      : [],
  );
  return JSON.stringify(request.body) + summaries.join('\n');
}

/** Answers the question with day 1's code word only when the request still holds day 1's fact (verbatim or compacted). */
const factsModel: ScriptFunction = (request) => {
  const text = requestText(request);
  if (text.includes(QUESTION)) {
    return { content: text.includes(fact(1)) ? `It was ${codeWord(1)}.` : 'I do not know any more.' };
  }
  return {
    content: 'Noted. I will remember the code word you gave me for that day; ask me about it whenever you like.',
  };
};

async function agentWith(options: Omit<ScriptedModelOptions, 'script'>) {
  const model = await startScriptedModel({ script: factsModel, ...options });
  const agent = await startTestAgent({ env, model });
  agents.push(agent);
  agents.push({ close: () => model.close() } as TestAgent);
  return agent;
}

let conversations = 0;

async function factsConversation(agent: TestAgent, turns: number, settings: ConversationSettings, padding = '') {
  const id = `provider-compaction-${++conversations}`;
  const handle = await agent.startConversation(id, { settings });
  const results: TurnResult[] = [];
  for (let day = 1; day <= turns; day++) {
    const content = `${fact(day)}${FILLER}${padding}${day === turns ? ` ${QUESTION}` : ''}`;
    results.push(await handle.executeUpdate(askUpdate, { args: [{ id: `m${day}`, content }] }));
  }
  const page = await handle.query(transcriptQuery, { from: 0, limit: 1000 });
  return { id, results, messages: page.messages };
}

const compactedIn = (results: TurnResult[]) =>
  results.filter((result) => result.compaction?.providerEdits?.some((edit) => edit.type === 'compaction'));
const withCompaction = (messages: { role: string }[]) =>
  messages.filter((message): message is AssistantMessage => 'providerCompaction' in message);

describe('provider-native compaction', () => {
  it('Responses: 40 turns past a 6,000-token window all answer; the compaction item round-trips and the last turn names the first fact', async () => {
    const agent = await agentWith({ contextWindow: 6_000 });
    const { results, messages } = await factsConversation(
      agent,
      40,
      { model: 'openai-responses:scripted-model', compaction: 'provider', contextWindow: 6_000 },
      ' And more.'.repeat(70),
    );

    expect(results.map((result) => result.stopReason)).toEqual(Array(40).fill('completed'));
    expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
    // The provider compacted; durable-agent summarized nothing, and nothing was refused.
    expect(compactedIn(results).length).toBeGreaterThan(1);
    expect(
      results.every((result) => result.compaction?.summaries === undefined || result.compaction.summaries === 0),
    ).toBe(true);
    expect(agent.model.requests.filter((request) => request.status !== 200)).toEqual([]);
    expect(agent.model.requests.some((request) => request.idempotencyKey?.includes('/compaction-'))).toBe(false);
    const requests = agent.model.requests;
    // Every request asked for compaction at 80% of the window.
    for (const request of requests) {
      expect(request.body.context_management).toEqual([{ type: 'compaction', compact_threshold: 4_800 }]);
    }
    // The item is kept with the assistant message it came with, and the next request sends it back first.
    const kept = withCompaction(messages);
    expect(kept.length).toBe(compactedIn(results).length);
    const latest = kept.at(-1)!.providerCompaction!;
    expect(latest.type).toBe('openai_compaction');
    const next = requests.find((request) =>
      JSON.stringify(request.body.input).includes(JSON.stringify(latest.type === 'openai_compaction' ? latest.id : '')),
    );
    expect(next).toBeDefined();
    const input = next!.body.input as { type?: string; role?: string }[];
    // The system prompt is absent here; the input starts at the compaction item, with nothing before it sent again.
    expect(input[0]).toMatchObject({ type: 'compaction' });
    expect(JSON.stringify(input)).not.toContain(fact(1));
  });

  it('Anthropic: the beta API compacts past its trigger, the compaction block is in the transcript and the turn result', async () => {
    const agent = await agentWith({ contextWindow: 70_000 });
    // 16 turns of about 4,500 tokens each pass the trigger (56,000, 80% of the window) once.
    const { results, messages } = await factsConversation(
      agent,
      16,
      { model: 'anthropic:scripted-model', compaction: 'provider', contextWindow: 70_000 },
      ' And one more thing, at length.'.repeat(600),
    );

    expect(results.map((result) => result.stopReason)).toEqual(Array(16).fill('completed'));
    expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
    const compacted = compactedIn(results);
    expect(compacted).toHaveLength(1);
    expect(compacted[0]!.compaction).toEqual({ summaries: 0, providerEdits: [{ type: 'compaction' }] });
    const requests = agent.model.requests;
    for (const request of requests) {
      expect(request.headers['anthropic-beta']).toBe('context-management-2025-06-27,compact-2026-01-12');
      expect(request.body.context_management).toEqual({
        edits: [
          { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 35_000 } },
          { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 56_000 } },
        ],
      });
    }
    // The block's summary is readable in the transcript, and later requests start from it.
    const [holder] = withCompaction(messages);
    expect(holder?.providerCompaction).toMatchObject({ type: 'anthropic_compaction' });
    const summary =
      holder!.providerCompaction!.type === 'anthropic_compaction' ? holder!.providerCompaction!.content : null;
    expect(summary).toContain(`- ${fact(1)}`);
    const last = requests.at(-1)!.body.messages as { role: string; content: { type: string }[] }[];
    expect(last[0]).toMatchObject({ role: 'assistant', content: [{ type: 'compaction' }, { type: 'text' }] });
  });
});

describe('provider-native compaction: Anthropic clears tool results in a turn', () => {
  it('a turn of six 10,000-token tool results passes the clearing trigger: the API clears the oldest, the transcript keeps them', async () => {
    const page = (index: number) => `Page ${index}: ` + 'lorem ipsum dolor sit amet '.repeat(1_500);
    const reads = 6;
    const model = await startScriptedModel({
      contextWindow: 70_000,
      script: (_request, { stepIndex }) =>
        stepIndex < reads
          ? { toolCalls: [{ name: 'read_page', arguments: { index: stepIndex + 1 } }] }
          : { content: 'I read all six pages.' },
    });
    const tools = createToolRegistry({
      tools: () => [
        defineTool({
          name: 'read_page',
          description: 'Read a page of the report.',
          parameters: z.object({ index: z.number() }),
          annotations: { readOnlyHint: true },
          execute: ({ index }) => page(index),
        }),
      ],
    });
    const agent = await startTestAgent({ env, model, workerOptions: { tools, toolResultMaxChars: 60_000 } });
    agents.push(agent, { close: () => model.close() } as TestAgent);
    const handle = await agent.startConversation(`provider-compaction-${++conversations}`, {
      settings: { model: 'anthropic:scripted-model', compaction: 'provider', contextWindow: 70_000 },
    });

    const result = await handle.executeUpdate(askUpdate, { args: [{ id: 'm1', content: 'Read the report.' }] });

    expect(result).toMatchObject({ stopReason: 'completed', answer: 'I read all six pages.', rounds: reads + 1 });
    // Cleared at 50% of the window (35,000 tokens), keeping the latest three results; nothing compacted.
    const cleared = result.compaction?.providerEdits ?? [];
    expect(cleared.length).toBeGreaterThan(0);
    for (const edit of cleared) {
      expect(edit.type).toBe('clear_tool_uses_20250919');
      expect(edit.clearedToolUses).toBeGreaterThan(0);
      expect(edit.clearedToolUses).toBeLessThanOrEqual(reads - 3);
      expect(edit.clearedInputTokens).toBeGreaterThan(0);
    }
    // Clearing is the API's, per request: the transcript keeps every result whole, for history and later providers.
    const { messages } = await handle.query(transcriptQuery, { from: 0, limit: 100 });
    const results = messages.filter((message) => message.role === 'tool');
    expect(results.map((message) => message.content)).toEqual(
      Array.from({ length: reads }, (_, index) => page(index + 1)),
    );
  });
});

describe('provider-native compaction with maxInputTokens', () => {
  it('40 turns answer, and every request after the first compaction sends the latest item', async () => {
    const agent = await agentWith({ contextWindow: 6_000 });
    // The limit is just above the provider's threshold (4,800): the input from the item on fits it, while the whole
    // transcript does not. (test/unit/context.test.ts holds the rule: trimming never drops the item.)
    const { results } = await factsConversation(
      agent,
      40,
      { model: 'openai-responses:scripted-model', compaction: 'provider', contextWindow: 6_000, maxInputTokens: 5_000 },
      ' And more.'.repeat(70),
    );

    expect(results.map((result) => result.stopReason)).toEqual(Array(40).fill('completed'));
    expect(compactedIn(results).length).toBeGreaterThan(1);
    expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
    // Every request after the first compaction starts from an item.
    const requests = agent.model.requests;
    const inputs = requests.map((request) => request.body.input as { type?: string }[]);
    const since = inputs.findIndex((input) => input.some((item) => item.type === 'compaction'));
    expect(since).toBeGreaterThan(0);
    for (const input of inputs.slice(since)) expect(input.some((item) => item.type === 'compaction')).toBe(true);
  });
});

describe('provider-native compaction: across runs', () => {
  it('continue-as-new carries the compaction item: every call after the first compaction starts from one, in every run', async () => {
    const agent = await agentWith({ contextWindow: 6_000 });
    const { results } = await factsConversation(
      agent,
      30,
      { model: 'openai-responses:scripted-model', compaction: 'provider', contextWindow: 6_000, maxTurnsPerRun: 4 },
      ' And more.'.repeat(70),
    );

    expect(results.map((result) => result.stopReason)).toEqual(Array(30).fill('completed'));
    expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
    const requests = agent.model.requests;
    const runs = new Set(requests.map((request) => request.idempotencyKey?.split('/')[1]));
    expect(runs.size).toBeGreaterThanOrEqual(7);
    const first = requests.findIndex((request) => JSON.stringify(request.body.input).includes('"type":"compaction"'));
    expect(first).toBeGreaterThan(0);
    const runsAfter = new Set<string | undefined>();
    for (const request of requests.slice(first)) {
      const input = request.body.input as { type?: string; role?: string }[];
      expect(input.find((item) => item.role !== 'system')).toMatchObject({ type: 'compaction' });
      runsAfter.add(request.idempotencyKey?.split('/')[1]);
    }
    // The item went on into later runs, not only the run that got it.
    expect(runsAfter.size).toBeGreaterThan(1);
    expect(requests.every((request) => request.status === 200)).toBe(true);
  });
});

describe('provider-native compaction: the fallback', () => {
  it('a refusal still compacts with a summary of our own and retries once; the window it teaches becomes the threshold', async () => {
    // The scripted model's window is unknown to the table: no threshold goes with the first calls.
    const agent = await agentWith({ contextWindow: 6_000, summaries: 'user-lines' });
    const { results } = await factsConversation(
      agent,
      40,
      { model: 'openai-responses:scripted-model', compaction: 'provider' },
      ' And more.'.repeat(70),
    );

    expect(results.map((result) => result.stopReason)).toEqual(Array(40).fill('completed'));
    expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
    const refused = agent.model.requests.filter((request) => request.status === 400);
    expect(refused).toHaveLength(1);
    // Our summaries came only in the refused turn (as many as it took to get down to half the window).
    const summarized = results.filter((result) => (result.compaction?.summaries ?? 0) > 0);
    const refusedTurn = Number(/\/turn-(\d+)\//.exec(refused[0]!.idempotencyKey ?? '')?.[1]);
    expect(summarized.map((result) => result.turn)).toEqual([refusedTurn]);
    // Before the refusal the provider had no threshold; after it, 80% of what the refusal taught.
    const before = agent.model.requests.filter((request) => request.sequence < refused[0]!.sequence);
    expect(
      before.every((request) => JSON.stringify(request.body.context_management) === '[{"type":"compaction"}]'),
    ).toBe(true);
    const thresholds = agent.model.requests
      .filter((request) => !request.idempotencyKey?.includes('/compaction-'))
      .map((request) => (request.body.context_management as { compact_threshold?: number }[])[0]?.compact_threshold);
    expect(thresholds.at(-1)).toBeLessThan(6_000 * 0.8);
    // From then on the provider compacted, and no summary of our own was needed.
    expect(compactedIn(results).length).toBeGreaterThan(0);
  });
});

describe('provider-native compaction: bad input', () => {
  it('a Chat Completions model ends the turn with ProviderCompactionUnsupported, naming the providers that can', async () => {
    const agent = await agentWith({});
    const handle = await agent.startConversation(`provider-compaction-${++conversations}`, {
      settings: { compaction: 'provider' },
    });
    const result = await handle.executeUpdate(askUpdate, { args: [{ id: 'm1', content: 'Hello.' }] });

    expect(result.stopReason).toBe(`error:${FailureType.ProviderCompactionUnsupported}`);
    expect(result.error?.message).toContain('"scripted-model" is served by Chat Completions');
    expect(result.error?.message).toContain('openai-responses: models');
    expect(result.error?.message).toContain('anthropic: models');
    expect(agent.model.requests).toEqual([]);
  });

  it('the client refuses an unknown compaction value, and "provider" for a Chat Completions model, before starting', async () => {
    const agent = await agentWith({});
    const client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
    const unknown = { compaction: 'summaries' } as unknown as ConversationSettings;
    await expect(client.start('bad-compaction-1', { settings: unknown })).rejects.toThrow(InvalidSettingsError);
    await expect(client.start('bad-compaction-1', { settings: unknown })).rejects.toThrow(
      'settings.compaction is string "summaries": expected true',
    );
    await expect(
      client.start('bad-compaction-2', { settings: { model: 'gpt-4o', compaction: 'provider' } }),
    ).rejects.toThrow('the model "gpt-4o" is served by Chat Completions');
    await expect(
      client.start('bad-compaction-3', { settings: { model: 'anthropic:claude-sonnet-4-5', compaction: 'provider' } }),
    ).resolves.toBeDefined();
  });
});
