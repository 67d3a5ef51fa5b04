import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { codeWord, fact, QUESTION } from '../helpers/code-words.js';
import type { RecordedRequest, ScriptFunction, ScriptedModelOptions } from '../../src/testing/scripted-model/index.js';
import { startScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { ChatMessage } from '../../src/shared/types.js';
import { askUpdate, transcriptQuery, type ConversationSettings } from '../../src/workflows/definitions.js';
import type { TurnResult } from '../../src/workflows/turn-result.js';
import { TranscriptChain } from '../../src/client/transcript.js';

/**
 * Compaction (docs/models.md#compaction) against the scripted model with a small window, through the real SDKs and a
 * real Temporal server: the conversation outgrows the window, its older turns are summarized, and what the person said
 * in its first turn still reaches the model at its end.
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
  'Please keep it in mind, because I will ask you about it later, and I will not say it again. Tomorrow will be ' +
  'just as full: the dentist at nine, a call with the bank about the mortgage, the school play in the afternoon, ' +
  'and then the long drive to my sister, who wants to talk about our parents and the house by the lake.';

/** Every string of a request, whichever API's shape it has. */
const requestText = (request: RecordedRequest) => JSON.stringify(request.body);

/**
 * The model: acknowledges each fact at some length, and answers the question with day 1's code word only when the
 * request it got still holds day 1's fact (verbatim or in a summary).
 */
const factsModel: ScriptFunction = (request) => {
  const text = requestText(request);
  if (text.includes(QUESTION)) {
    return { content: text.includes(fact(1)) ? `It was ${codeWord(1)}.` : 'I do not know any more.' };
  }
  return {
    content:
      'Noted. I will remember the code word you gave me for that day, together with everything else you told me ' +
      'so far; ask me about it whenever you like and I will tell you exactly what it was.',
  };
};

async function agentWith(options: Omit<ScriptedModelOptions, 'script'>, script: ScriptFunction = factsModel) {
  const model = await startScriptedModel({ script, ...options });
  const agent = await startTestAgent({ env, model });
  agents.push(agent);
  // The agent does not own a model it was given: stop it with the agent.
  agents.push({ close: () => model.close() } as TestAgent);
  return agent;
}

let conversations = 0;

/** A conversation of `turns` turns, each stating a new fact; the last also asks for day 1's. */
async function factsConversation(agent: TestAgent, turns: number, settings: ConversationSettings = {}) {
  const id = `compaction-${++conversations}`;
  const handle = await agent.startConversation(id, { settings });
  const results: TurnResult[] = [];
  for (let day = 1; day <= turns; day++) {
    const content = `${fact(day)}${FILLER}${day === turns ? ` ${QUESTION}` : ''}`;
    results.push(await handle.executeUpdate(askUpdate, { args: [{ id: `m${day}`, content }] }));
  }
  return { id, handle, results };
}

const refusals = (agent: TestAgent) => agent.model.requests.filter((request) => request.status === 400);
const summaryRequests = (agent: TestAgent) =>
  agent.model.requests.filter((request) => request.idempotencyKey?.endsWith('/compaction-1'));

describe('compaction', () => {
  it('with default settings, 40 turns against a model that refuses over 6,000 tokens all answer, and the last names the first fact', async () => {
    const agent = await agentWith({ contextWindow: 6_000, summaries: 'user-lines' });
    const { handle, results } = await factsConversation(agent, 40);

    expect(results.map((result) => result.stopReason)).toEqual(Array(40).fill('completed'));
    expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
    // The window was unknown: the first refusal taught it, and compaction kept every later input under it.
    expect(refusals(agent)).toHaveLength(1);
    const compacted = results.filter((result) => (result.compaction?.summaries ?? 0) > 0);
    expect(compacted.length).toBeGreaterThan(1);
    expect(results.every((result) => result.compaction?.trimmed === undefined)).toBe(true);
    for (const request of agent.model.requests.filter((entry) => entry.status === 200)) {
      expect(Math.ceil(JSON.stringify(request.body).length / 4)).toBeLessThanOrEqual(6_000);
    }
    // The summaries are in the transcript, each saying what it summarized.
    const page = await handle.query(transcriptQuery, { from: 0, limit: 1000 });
    const summaries = page.messages.filter(
      (message): message is Extract<ChatMessage, { role: 'system' }> =>
        message.role === 'system' && message.compaction !== undefined,
    );
    expect(summaries.length).toBe(compacted.reduce((sum, result) => sum + result.compaction!.summaries, 0));
    expect(summaries[0]?.compaction).toMatchObject({ from: 0, reason: 'refusal' });
    expect(summaries.at(-1)?.content).toContain(fact(1));
  });

  it('compacts before the window is reached when settings.contextWindow names it, and never splits a turn', async () => {
    const agent = await agentWith({ contextWindow: 3_000, summaries: 'user-lines' });
    const { results } = await factsConversation(agent, 16, { contextWindow: 3_000 });

    expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
    expect(refusals(agent)).toHaveLength(0);
    expect(summaryRequests(agent).length).toBeGreaterThan(0);
    // What the model saw after a summary starts, after the system messages, with a user message.
    for (const request of agent.model.requests.filter((entry) => !entry.idempotencyKey?.includes('/compaction-'))) {
      const roles = request.messages.map((message) => message.role).filter((role) => role !== 'system');
      expect(roles[0]).toBe('user');
    }
  });

  it('carries the summary through continue-as-new: a conversation of many runs still names the first fact', async () => {
    const agent = await agentWith({ contextWindow: 3_000, summaries: 'user-lines' });
    const { handle, results } = await factsConversation(agent, 16, { contextWindow: 3_000, maxTurnsPerRun: 3 });

    expect(results.map((result) => result.stopReason)).toEqual(Array(16).fill('completed'));
    // Summarized in an earlier run (three turns a run: turn 16 runs alone), day 1's fact reached the last run's model
    // only in the carried summary.
    const compactedAt = results.findIndex((result) => (result.compaction?.summaries ?? 0) > 0);
    expect(compactedAt).toBeGreaterThan(0);
    expect(compactedAt + 1).toBeLessThanOrEqual(15);
    // Read across the runs as `history` reads it: every message once, in order, the summaries where they were made.
    const latest = env.client.workflow.getHandle(handle.workflowId);
    const { runId } = await latest.describe();
    const chain = new TranscriptChain(runId, (run, request) =>
      env.client.workflow.getHandle(handle.workflowId, run).query(transcriptQuery, request),
    );
    const whole: ChatMessage[] = [];
    for await (const message of chain.messages()) whole.push(message);
    const users = whole.flatMap((message) => (message.role === 'user' ? [message.id] : []));
    expect(users).toEqual(Array.from({ length: 16 }, (_, index) => `m${index + 1}`));
    const summaries = whole.filter((message) => message.role === 'system' && message.compaction !== undefined);
    expect(summaries.length).toBe(results.reduce((sum, result) => sum + (result.compaction?.summaries ?? 0), 0));
    for (const summary of summaries) {
      const { to } = (summary as Extract<ChatMessage, { role: 'system' }>).compaction!;
      expect(whole[to]?.role).toBe('user');
    }
    expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
    expect(refusals(agent)).toHaveLength(0);
  });
});

describe('compaction on each API', () => {
  for (const [model, api] of [
    ['anthropic:claude-scripted', 'messages'],
    ['openai-responses:gpt-scripted', 'responses'],
  ] as const) {
    it(`learns the window from the ${api} API's refusal and goes on`, async () => {
      const agent = await agentWith({ contextWindow: 3_000, summaries: 'user-lines' });
      const { results } = await factsConversation(agent, 16, { model });

      expect(agent.model.requests.every((request) => request.api === api)).toBe(true);
      expect(results.map((result) => result.stopReason)).toEqual(Array(16).fill('completed'));
      expect(results.at(-1)?.answer).toBe(`It was ${codeWord(1)}.`);
      expect(refusals(agent).length).toBeGreaterThanOrEqual(1);
      expect(refusals(agent).length).toBeLessThanOrEqual(2);
    });
  }
});

describe('compaction: a summary that fails', () => {
  const cases: [string, Omit<ScriptedModelOptions, 'script'>, RegExp][] = [
    [
      'comes back longer than what it replaces',
      { summaries: () => 'A very long summary. '.repeat(2_000) },
      /longer than what it replaces/,
    ],
    ['comes back empty', { summaries: () => '   ' }, /came back empty/],
  ];
  for (const [what, options, reason] of cases) {
    it(`${what}: the turn goes on with older turns trimmed, says so, and keeps the newest message`, async () => {
      const agent = await agentWith(options);
      const { results } = await factsConversation(agent, 12, { contextWindow: 2_000 });

      expect(results.map((result) => result.stopReason)).toEqual(Array(12).fill('completed'));
      const trimmed = results.filter((result) => result.compaction?.trimmed !== undefined);
      expect(trimmed.length).toBeGreaterThan(0);
      expect(trimmed[0]?.compaction?.trimmed).toMatch(reason);
      expect(trimmed.every((result) => result.compaction?.summaries === 0)).toBe(true);
      // One summary call per turn at most: a failed summary is not tried again in the same turn.
      const perTurn = new Map<string, number>();
      for (const request of agent.model.requests.filter((entry) => entry.idempotencyKey?.includes('/compaction-'))) {
        const turn = /turn-\d+/.exec(request.idempotencyKey!)![0];
        perTurn.set(turn, (perTurn.get(turn) ?? 0) + 1);
      }
      expect(Math.max(...perTurn.values())).toBe(1);
      // The newest message reached the model in every turn.
      const last = agent.model.requests.at(-1)!;
      expect(requestText(last)).toContain(fact(12));
    });
  }

  it('is refused by the content filter: the turn goes on trimmed', async () => {
    const filtering: ScriptFunction = (request, position) =>
      request.idempotencyKey?.includes('/compaction-')
        ? {
            error: {
              status: 400,
              body: {
                error: { message: 'Filtered.', type: 'invalid_request_error', param: null, code: 'content_filter' },
              },
            },
          }
        : factsModel(request, position);
    const agent = await agentWith({}, filtering);
    const { results } = await factsConversation(agent, 12, { contextWindow: 2_000 });

    expect(results.map((result) => result.stopReason)).toEqual(Array(12).fill('completed'));
    expect(results.find((result) => result.compaction?.trimmed)?.compaction?.trimmed).toMatch(/ModelContentFiltered/);
  });
});
