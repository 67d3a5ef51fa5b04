import { describe, expect, it } from 'vitest';
import { toOpenAIMessage } from '../../src/worker/activities/model/call.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { CACHED_USAGE, CACHED_USAGE_USD, CLAUDE_PRICES } from '../helpers/cached-usage.js';
import type { ChatMessage } from '../../src/shared/types.js';
import type { RecordedRequest } from '../../src/testing/scripted-model/index.js';
import { thinkingSignature } from '../../src/testing/scripted-model/anthropic-messages.js';
import { encryptedReasoning } from '../../src/testing/scripted-model/openai-responses.js';
import {
  approveUpdate,
  type ConversationOutcome,
  type ConversationSettings,
  statusQuery,
} from '../../src/workflows/definitions.js';
import type { WorkflowHandle } from '@temporalio/client';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { expectValidToolPairing } from '../helpers/transcript.js';

const bed = useTimeSkippingWithCrm();
const ANTHROPIC = 'anthropic:claude-scripted';
type Handle = WorkflowHandle<typeof conversationWorkflow>;
let counter = 0;

type Block = { type: string } & Record<string, unknown>;
type Turn = { role: string; content: Block[] };

/** The Messages API turns a recorded request sent. */
function turnsOf(request: RecordedRequest | undefined): Turn[] {
  return (request?.body.messages ?? []) as unknown as Turn[];
}

const calls = (tool: string) => bed.crm.calls[tool] ?? 0;

async function oneShot(
  agent: Awaited<ReturnType<typeof bed.agentWith>>,
  id: string,
  content: string,
  settings: ConversationSettings,
  state?: ConversationOutcome['state'],
): Promise<ConversationOutcome> {
  const handle: Handle = await agent.startConversation(id, {
    settings,
    messages: [{ id: `${id}-${content.length}`, content }],
    closeWhenIdle: true,
    ...(state ? { state } : {}),
  });
  return handle.result();
}

describe('turns on Anthropic Messages and OpenAI Responses', () => {
  it('anthropic turn: a thinking tool chain with parallel calls runs each tool once and sends thinking back signed', async () => {
    const thought = 'Find Ada, then her record and her company.';
    const agent = await bed.agentWith([
      { reasoning: thought, toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      {
        reasoning: 'Both at once.',
        toolCalls: [
          { name: 'crm__get_record', arguments: { userId: 'u-1' } },
          { name: 'crm__get_company', arguments: { companyId: 'c-9' } },
        ],
      },
      { content: 'Ada works at Analytical Engines Ltd.' },
    ]);
    const before = { record: calls('get_record'), company: calls('get_company') };

    const outcome = await oneShot(agent, `anthropic-chain-${++counter}`, 'Where does Ada work?', {
      model: ANTHROPIC,
      systemPrompt: 'Use the CRM.',
      thinking: { budgetTokens: 2048 },
    });

    const transcript: ChatMessage[] = outcome.state.transcript;
    expect(transcript.at(-1)).toMatchObject({ role: 'assistant', content: 'Ada works at Analytical Engines Ltd.' });
    expectValidToolPairing(transcript.map(toOpenAIMessage));
    expect(calls('get_record') - before.record).toBe(1);
    expect(calls('get_company') - before.company).toBe(1);
    // The thinking is kept beside the text, never in it.
    const firstAnswer = transcript.find((message) => message.role === 'assistant');
    expect(firstAnswer).toMatchObject({
      content: null,
      reasoning: [{ type: 'anthropic_thinking', thinking: thought, signature: thinkingSignature(thought) }],
    });

    const requests = agent.model.requests;
    expect(requests.map((request) => request.api)).toEqual(['messages', 'messages', 'messages']);
    const third = turnsOf(requests[2]);
    expect(third.map((turn) => turn.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(third[1]!.content[0]).toEqual({
      type: 'thinking',
      thinking: thought,
      signature: thinkingSignature(thought),
    });
    expect(third[4]!.content.map((block) => [block.type, block.is_error])).toEqual([
      ['tool_result', undefined],
      ['tool_result', undefined],
    ]);
    expect(requests[2]?.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('anthropic turn: a call that needs approval waits for it, then runs once and its result goes back as tool_result', async () => {
    const agent = await bed.agentWith(
      [
        { toolCalls: [{ name: 'crm__update_field', arguments: { userId: 'u-2', field: 'plan', value: 'pro' } }] },
        { content: 'Alan is on pro.' },
      ],
      { mcpServers: [bed.crm.config('crm', { requireApproval: 'writes' })] },
    );
    const before = calls('update_field');
    const handle: Handle = await agent.startConversation(`anthropic-approval-${++counter}`, {
      settings: { model: ANTHROPIC },
      messages: [{ id: 'm-1', content: 'Upgrade Alan.' }],
      closeWhenIdle: true,
    });
    let callId: string | undefined;
    for (let tries = 0; tries < 200 && callId === undefined; tries++) {
      callId = (await handle.query(statusQuery)).pendingApprovals?.[0]?.callId;
      if (callId === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(callId).toBeDefined();
    await handle.executeUpdate(approveUpdate, { args: [{ callId: callId! }] });
    const outcome = await handle.result();

    expect(outcome.state.transcript.at(-1)).toMatchObject({ content: 'Alan is on pro.' });
    expect(calls('update_field') - before).toBe(1);
    const results = turnsOf(agent.model.requests[1]).at(-1)!.content;
    expect(results).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: callId }) as unknown as Block,
    ]);
  });

  it('anthropic turn: out of tool calls, the final answer is asked with tool_choice none and the instruction in system', async () => {
    const agent = await bed.agentWith([
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { content: 'Ada is u-1.' },
    ]);
    const outcome = await oneShot(agent, `anthropic-budget-${++counter}`, 'Who is Ada?', {
      model: ANTHROPIC,
      systemPrompt: 'Use the CRM.',
      budget: { maxToolCalls: 1 },
    });
    expect(outcome.state.transcript.at(-1)).toMatchObject({ role: 'assistant', content: 'Ada is u-1.' });
    const final = agent.model.requests[1]!.body;
    expect(final.tool_choice).toEqual({ type: 'none' });
    const system = final.system as Block[];
    expect(system).toHaveLength(2);
    expect(system[0]).toMatchObject({ text: 'Use the CRM.', cache_control: { type: 'ephemeral' } });
    expect(system[1]).not.toHaveProperty('cache_control');
  });

  it('a conversation recorded on Chat Completions continues on Anthropic, and back, with its tool calls intact', async () => {
    const agent = await bed.agentWith([
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { content: 'Ada is u-1.' },
      { reasoning: 'Her record next.', toolCalls: [{ name: 'crm__get_record', arguments: { userId: 'u-1' } }] },
      { content: 'Ada is on the free plan.' },
      { content: 'You asked about Ada.' },
    ]);
    const id = `switch-${++counter}`;
    const first = await oneShot(agent, id, 'Who is Ada?', {});
    const second = await oneShot(
      agent,
      id,
      'What plan is she on?',
      { model: ANTHROPIC, thinking: { budgetTokens: 1024 } },
      first.state,
    );
    const third = await oneShot(agent, id, 'What did I ask?', {}, second.state);

    expect(third.state.transcript.at(-1)).toMatchObject({ content: 'You asked about Ada.' });
    expectValidToolPairing(third.state.transcript.map(toOpenAIMessage));
    expect(agent.model.requests.map((request) => request.api)).toEqual([
      'chat-completions',
      'chat-completions',
      'messages',
      'messages',
      'chat-completions',
    ]);
    // The first turn's call and result, recorded on Chat Completions, reach Anthropic as tool_use and tool_result.
    const onAnthropic = turnsOf(agent.model.requests[2]);
    expect(onAnthropic[1]!.content[0]).toMatchObject({
      type: 'tool_use',
      name: 'crm__find_user',
      input: { name: 'Ada' },
    });
    expect(onAnthropic[2]!.content[0]).toMatchObject({ type: 'tool_result' });
    // Back on Chat Completions, the thinking stays out of what the model reads.
    const backOnOpenAI = JSON.stringify(agent.model.requests[4]!.messages);
    expect(backOnOpenAI).not.toContain('Her record next.');
    expect(backOnOpenAI).toContain('crm__get_record');
  });

  it('responses turn: a tool chain keeps its encrypted reasoning and sends it back with the call outputs', async () => {
    const agent = await bed.agentWith([
      { reasoning: 'Find Ada.', toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { content: 'Ada is u-1.' },
    ]);
    const outcome = await oneShot(agent, `responses-chain-${++counter}`, 'Who is Ada?', {
      model: 'openai-responses:gpt-scripted',
    });
    expect(outcome.state.transcript.at(-1)).toMatchObject({ role: 'assistant', content: 'Ada is u-1.' });
    expectValidToolPairing(outcome.state.transcript.map(toOpenAIMessage));
    const requests = agent.model.requests;
    expect(requests.map((request) => request.api)).toEqual(['responses', 'responses']);
    const second = requests[1]!.body.input as Block[];
    expect(second.map((item) => item.type ?? item.role)).toEqual([
      'user',
      'reasoning',
      'function_call',
      'function_call_output',
    ]);
    expect(second[1]).toMatchObject({ encrypted_content: encryptedReasoning('Find Ada.') });
  });

  it('anthropic cost: under a cost budget the model is priced by its own name, cache reads and writes at their prices', async () => {
    const prices = new PriceTable(CLAUDE_PRICES);
    const agent = await bed.agentWith([{ content: 'Hello.', usage: CACHED_USAGE }], { workerOptions: { prices } });

    const result = await agent.ask('Hello?', { settings: { model: ANTHROPIC, budget: { maxCostUsd: 1 } } });

    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Hello.' });
    expect(result.usage).toMatchObject({ inputTokens: 3_400, outputTokens: 100 });
    expect(result.cost?.usd).toBeCloseTo(CACHED_USAGE_USD, 12);
    expect(agent.model.requests.map((request) => request.api)).toEqual(['messages']);
  });
});
