import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { toOpenAIMessage } from '../../src/worker/activities/model/call.js';
import type { ChatMessage, JsonObject } from '../../src/shared/types.js';
import type { RecordedRequest, ScriptStep } from '../../src/testing/scripted-model/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { approveUpdate, denyUpdate } from '../../src/workflows/definitions.js';
import type { ConversationOutcome, ConversationSettings, ConversationStatus } from '../../src/workflows/definitions.js';
import type { TurnResult } from '../../src/workflows/turn-result.js';
import { CACHED_USAGE } from '../helpers/cached-usage.js';
import { waitForStatus } from '../helpers/status.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { expectValidToolPairing, neutralTranscript } from '../helpers/transcript.js';

/**
 * The turn loop, streaming, approvals, budgets and failures, run alike on each provider against the scripted model:
 * the same script gives the same turn result and the same provider-neutral transcript, whichever API served it, and
 * every request that reached the model was in that API's own shape.
 */

const bed = useTimeSkippingWithCrm();
type Handle = WorkflowHandle<typeof conversationWorkflow>;
type Block = { type?: string; role?: string } & Record<string, unknown>;

interface Provider {
  name: string;
  model: string;
  api: RecordedRequest['api'];
  /** The tool results a request carried, in the API's own shape, as `[call id, text, flagged as an error]`. */
  toolResults(request: RecordedRequest): [string, string, boolean | undefined][];
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : ((content as Block[]).map((block) => block.text).join('') ?? '');

const PROVIDERS: Provider[] = [
  {
    name: 'Chat Completions',
    model: 'openai:gpt-scripted',
    api: 'chat-completions',
    toolResults: (request) =>
      request.messages.flatMap((message) =>
        message.role === 'tool' ? [[message.tool_call_id, textOf(message.content), undefined]] : [],
      ),
  },
  {
    name: 'Anthropic Messages',
    model: 'anthropic:claude-scripted',
    api: 'messages',
    toolResults: (request) =>
      (request.body.messages as unknown as { content: Block[] }[]).flatMap((turn) =>
        turn.content
          .filter((block) => block.type === 'tool_result')
          .map((block): [string, string, boolean | undefined] => [
            block.tool_use_id as string,
            textOf(block.content),
            block.is_error as boolean | undefined,
          ]),
      ),
  },
  {
    name: 'OpenAI Responses',
    model: 'openai-responses:gpt-scripted',
    api: 'responses',
    toolResults: (request) =>
      (request.body.input as unknown as Block[])
        .filter((item) => item.type === 'function_call_output')
        .map((item) => [item.call_id as string, item.output as string, undefined]),
  },
];

const call = (name: string, input: JsonObject) => ({ name: `crm__${name}`, arguments: input });
const upgrade = (userId: string) => call('update_field', { userId, field: 'plan', value: 'pro' });
let counter = 0;

/** What each answer reports unless its step says otherwise: estimates would follow each API's request length. */
const USAGE = { prompt_tokens: 200, completion_tokens: 20 };
const counted = (steps: ScriptStep[]): ScriptStep[] =>
  steps.map((step) => ('error' in step || step.usage ? step : { usage: USAGE, ...step }));

/** The request has the fields only its API has, and none of the others'. */
function expectOwnShape(request: RecordedRequest, provider: Provider): void {
  expect(request.api).toBe(provider.api);
  const { body } = request;
  if (provider.api === 'messages') {
    expect(body).toMatchObject({ model: 'claude-scripted', max_tokens: expect.any(Number) as number });
    expect(body).not.toHaveProperty('input');
  } else if (provider.api === 'responses') {
    expect(body).toMatchObject({ model: 'gpt-scripted', store: false, include: ['reasoning.encrypted_content'] });
    expect(body).not.toHaveProperty('messages');
  } else {
    expect(body).toMatchObject({ model: 'gpt-scripted' });
    expect(body).not.toHaveProperty('input');
    expect(body).not.toHaveProperty('max_tokens');
  }
}

/** What the first provider's run of each test gave: every other provider's run of it must give the same. */
const firstProvider = new Map<string, unknown>();
function expectSameOnEveryProvider(test: string, value: unknown): void {
  if (firstProvider.has(test)) expect(value).toEqual(firstProvider.get(test));
  else firstProvider.set(test, value);
}

describe.each(PROVIDERS)('on $name', (provider) => {
  const settings = (extra: ConversationSettings = {}): ConversationSettings => ({ model: provider.model, ...extra });

  async function converse(
    script: ScriptStep[],
    messages: string[],
    extra: ConversationSettings = {},
    approvals = false,
  ): Promise<{ agent: Awaited<ReturnType<typeof bed.agentWith>>; handle: Handle }> {
    const agent = await bed.agentWith(
      counted(script),
      approvals ? { mcpServers: [bed.crm.config('crm', { requireApproval: 'writes' })] } : {},
    );
    const id = `each-provider-${provider.api}-${++counter}`;
    const handle: Handle = await agent.startConversation(id, {
      settings: settings(extra),
      messages: messages.map((content, index) => ({ id: `${id}-m${index}`, content })),
      closeWhenIdle: true,
    });
    return { agent, handle };
  }

  /**
   * The turn's result, checked against `expected`, and its transcript without call ids, both the same as on the first
   * provider that ran `test`; every request checked for the API's shape.
   */
  async function finish(
    run: Awaited<ReturnType<typeof converse>>,
    test: string,
    expected: Partial<TurnResult>,
  ): Promise<{
    result: TurnResult;
    transcript: ChatMessage[];
    requests: readonly RecordedRequest[];
    outcome: ConversationOutcome;
  }> {
    const outcome = await run.handle.result();
    const requests = run.agent.model.requests;
    for (const request of requests) expectOwnShape(request, provider);
    expectValidToolPairing(outcome.state.transcript.map(toOpenAIMessage));
    const {
      durationMs: _durationMs,
      conversationId: _conversationId,
      messageId: _messageId,
      ...result
    } = outcome.state.lastResult!;
    const transcript = neutralTranscript(outcome.state.transcript);
    expect(result).toMatchObject(expected);
    // Only Anthropic reports cache writes (OpenAI bills none): the budget test checks them apart.
    const usage = { ...result.usage, cacheWriteTokens: undefined };
    expectSameOnEveryProvider(test, { result: { ...result, usage }, transcript });
    return { result: result as TurnResult, transcript, requests, outcome };
  }

  it('tool loop: two rounds of parallel calls, then an answer; each tool runs once and its result goes back', async () => {
    const before = { ...bed.crm.calls };
    const run = await converse(
      [
        { toolCalls: [call('find_user', { name: 'Ada' }), call('overdue_tasks', {})] },
        { toolCalls: [call('get_record', { userId: 'u-1' }), call('get_company', { companyId: 'c-9' })] },
        { content: 'Ada is on basic at Analytical Engines Ltd.' },
      ],
      ['Tell me about Ada.'],
    );
    const { transcript, requests } = await finish(run, 'tool loop', {
      turn: 1,
      answer: 'Ada is on basic at Analytical Engines Ltd.',
      stopReason: 'completed',
      rounds: 3,
      toolCalls: 4,
    });
    for (const tool of ['find_user', 'overdue_tasks', 'get_record', 'get_company']) {
      expect((bed.crm.calls[tool] ?? 0) - (before[tool] ?? 0), tool).toBe(1);
    }
    expect(transcript.map((message) => [message.role, 'outcome' in message ? message.outcome : undefined])).toEqual([
      ['user', undefined],
      ['assistant', undefined],
      ['tool', 'ok'],
      ['tool', 'ok'],
      ['assistant', undefined],
      ['tool', 'ok'],
      ['tool', 'ok'],
      ['assistant', undefined],
    ]);
    expect(transcript[1]).toEqual({
      role: 'assistant',
      content: null,
      toolCalls: [
        { id: 'call-1', name: 'crm__find_user', arguments: '{"name":"Ada"}' },
        { id: 'call-2', name: 'crm__overdue_tasks', arguments: '{}' },
      ],
    });
    expect(transcript[5]).toMatchObject({ role: 'tool', toolCallId: 'call-3', name: 'crm__get_record' });
    expect(transcript.at(-1)).toEqual({ role: 'assistant', content: 'Ada is on basic at Analytical Engines Ltd.' });
    // The last request carried all four results, in the API's shape, in the order of the calls.
    const results = provider.toolResults(requests[2]!);
    expect(results.map(([, text]) => JSON.parse(text) as unknown)).toEqual([
      { id: 'u-1', name: 'Ada Lovelace', companyId: 'c-9' },
      [{ id: 't-3', title: 'Send the quarterly report', due: '2026-11-20' }],
      { plan: 'basic', email: 'ada@example.com' },
      { id: 'c-9', name: 'Analytical Engines Ltd', city: 'London' },
    ]);
    expect(results.map(([, , isError]) => isError ?? false)).toEqual([false, false, false, false]);
  });

  it('streaming: the answer reaches the stream as text deltas of its round, joined in order', async () => {
    const answer = 'Ada Lovelace wrote the first program, for the Analytical Engine. '.repeat(4).trim();
    const run = await converse(
      [{ toolCalls: [call('find_user', { name: 'Ada' })] }, { content: answer }],
      ['Who is Ada?'],
    );
    const { outcome, requests } = await finish(run, 'streaming', { stopReason: 'completed', answer, rounds: 2 });

    expect(requests.map((request) => request.body.stream)).toEqual([true, true]);
    const events = outcome.state.streamEvents ?? [];
    const deltas = events.flatMap((event) => (event.type === 'text_delta' ? [event] : []));
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.map((delta) => delta.text).join('')).toBe(answer);
    expect(new Set(deltas.map((delta) => `${delta.round}/${delta.attempt}`))).toEqual(new Set(['2/1']));
    expect([...new Set(events.map((event) => event.type))]).toEqual([
      'turn_started',
      'model_attempt_started',
      'tool_call_started',
      'tool_call_finished',
      'text_delta',
      'turn_finished',
    ]);
  });

  it('approval: a call that needs approval runs once approved; in the next turn, denied, its reason goes back', async () => {
    const before = bed.crm.calls.update_field ?? 0;
    const run = await converse(
      [
        { toolCalls: [upgrade('u-2')] },
        { content: 'Alan is on pro.' },
        { toolCalls: [upgrade('u-3')] },
        { content: 'u-3 stays where they are.' },
      ],
      ['Upgrade Alan.', 'Upgrade u-3.'],
      {},
      true,
    );
    const pending = (status: ConversationStatus) => status.pendingApprovals?.length === 1;
    const first = (await waitForStatus(run.handle, pending)).pendingApprovals![0]!;
    expect(first.arguments).toMatchObject({ userId: 'u-2' });
    await run.handle.executeUpdate(approveUpdate, { args: [{ callId: first.callId }] });
    const second = (
      await waitForStatus(
        run.handle,
        (status) => pending(status) && status.pendingApprovals![0]!.callId !== first.callId,
      )
    ).pendingApprovals![0]!;
    expect(second.arguments).toMatchObject({ userId: 'u-3' });
    await run.handle.executeUpdate(denyUpdate, { args: [{ callId: second.callId, reason: 'Not that account.' }] });
    const { result, transcript, requests } = await finish(run, 'approval', { answer: 'u-3 stays where they are.' });
    expect([result.turn, result.stopReason, result.toolCalls]).toEqual([2, 'completed', 0]);
    expect((bed.crm.calls.update_field ?? 0) - before).toBe(1);
    const tools = transcript.filter((message) => message.role === 'tool');
    expect(tools.map((message) => message.outcome)).toEqual(['ok', 'denied']);
    expect(tools[1]!.content).toContain('Not that account.');
    const [denial] = provider.toolResults(requests[3]!).slice(-1);
    expect(denial![0]).toBe(second.callId);
    expect(denial![1]).toContain('Not that account.');
    // Only the Messages API has an error flag; the others read the refusal from the text.
    expect(denial![2]).toBe(provider.api === 'messages' ? true : undefined);
  });

  it('budget: maxToolCalls stops with budget:toolCalls; the call past it is not run and the final answer has no tools', async () => {
    const run = await converse(
      [
        { toolCalls: [call('find_user', { name: 'Ada' }), call('find_user', { name: 'Alan' })] },
        { content: 'I looked Ada up.' },
      ],
      ['Find Ada and Alan.'],
      { budget: { maxToolCalls: 1 } },
    );
    const { result, transcript, requests } = await finish(run, 'maxToolCalls', { stopReason: 'budget:toolCalls' });
    expect([result.answer, result.rounds, result.toolCalls]).toEqual(['I looked Ada up.', 2, 1]);
    expect(transcript.filter((message) => message.role === 'tool').map((message) => message.outcome)).toEqual([
      'ok',
      'budget_exhausted',
    ]);
    const final = requests[1]!.body;
    expect(final.tool_choice).toEqual(provider.api === 'messages' ? { type: 'none' } : 'none');
  });

  it('budget: maxRounds stops with budget:rounds after that many rounds, then asks for a final answer', async () => {
    const findAda = { toolCalls: [call('find_user', { name: 'Ada' })] };
    const run = await converse([findAda, findAda, { content: 'Ada is u-1.' }], ['Keep looking.'], {
      budget: { maxRounds: 2 },
    });
    const { result } = await finish(run, 'maxRounds', { stopReason: 'budget:rounds', overrun: { rounds: 1 } });
    expect([result.answer, result.rounds, result.toolCalls]).toEqual(['Ada is u-1.', 3, 2]);
  });

  it('budget: cache reads and writes count as input in the token budget, whichever API reports them', async () => {
    // Each round reads 3,400 tokens (2,000 of them from the cache, 400 written to it) and writes 100: 3,500 a round.
    const findAda = { toolCalls: [call('find_user', { name: 'Ada' })], usage: CACHED_USAGE };
    const run = await converse([findAda, findAda, { content: 'Ada is u-1.', usage: CACHED_USAGE }], ['Find Ada.'], {
      budget: { maxTokens: 5_000 },
    });
    const { result } = await finish(run, 'maxTokens', { stopReason: 'budget:tokens', overrun: { tokens: 5_500 } });
    expect([result.answer, result.rounds, result.toolCalls]).toEqual(['Ada is u-1.', 3, 2]);
    expect(result.usage).toEqual({
      inputTokens: 10_200,
      outputTokens: 300,
      totalTokens: 10_500,
      cacheReadTokens: 6_000,
      // Only Anthropic reports cache writes (OpenAI bills none).
      ...(provider.api === 'messages' ? { cacheWriteTokens: 1_200 } : {}),
      reasoningTokens: 120,
    });
  });

  it('failures: an overloaded and a failing model are retried until it answers; a failing tool is an error result', async () => {
    const run = await converse(
      [
        { error: { status: 529, headers: { 'retry-after': '30' } } },
        { toolCalls: [call('find_user', { name: 'Grace' })] },
        { error: { status: 500, times: 2 } },
        { content: 'Nobody called Grace.' },
      ],
      ['Find Grace.'],
    );
    const { result, transcript, requests } = await finish(run, 'failures', { answer: 'Nobody called Grace.' });
    expect([result.stopReason, result.rounds, result.toolCalls]).toEqual(['completed', 2, 1]);
    expect(requests.map((request) => request.status)).toEqual([529, 200, 500, 500, 200]);
    // A retry is the same call: it repeats its idempotency key.
    const keys = requests.map((request) => request.idempotencyKey);
    expect(new Set(keys.slice(0, 2)).size).toBe(1);
    expect(new Set(keys.slice(2)).size).toBe(1);
    expect(transcript[2]).toEqual({
      role: 'tool',
      toolCallId: 'call-1',
      name: 'crm__find_user',
      content: 'No user matches "Grace".',
      outcome: 'error',
    });
    const [[, text, isError]] = provider.toolResults(requests.at(-1)!) as [[string, string, boolean | undefined]];
    expect(text).toContain('No user matches "Grace".');
    expect(isError).toBe(provider.api === 'messages' ? true : undefined);
  });
});
