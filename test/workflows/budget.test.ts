import { describe, expect, it } from 'vitest';
import { FINAL_ANSWER_INSTRUCTION } from '../../src/workflows/turn.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { expectValidToolPairing } from '../helpers/transcript.js';

const bed = useTimeSkippingWithCrm();

const { agentWith } = bed;

const findAda = { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] };

describe('the turn budget', () => {
  it('budget: stops after maxRounds and asks for a final answer with tools disabled', async () => {
    const agent = await agentWith([findAda, findAda, { content: 'Here is what I found so far.' }]);
    const result = await agent.ask('Keep looking', { settings: { budget: { maxRounds: 2 } } });

    expect(result).toMatchObject({
      stopReason: 'budget:rounds',
      answer: 'Here is what I found so far.',
      rounds: 3,
      toolCalls: 2,
      overrun: { rounds: 1 },
    });
    const final = agent.model.requests.at(-1)!;
    expect(agent.model.requests).toHaveLength(3);
    expect(final.toolChoice).toBe('none');
    expect(final.messages.at(-1)).toEqual({ role: 'system', content: FINAL_ANSWER_INSTRUCTION });
    expectValidToolPairing(final.messages);
  });

  it('budget: with finalAnswer off, a budget stop ends the turn without another model call', async () => {
    const agent = await agentWith([findAda, findAda]);
    const result = await agent.ask('Keep looking', { settings: { budget: { maxRounds: 1 }, finalAnswer: false } });
    expect(result).toMatchObject({ stopReason: 'budget:rounds', answer: null, rounds: 1, toolCalls: 1 });
    expect(agent.model.requests).toHaveLength(1);
  });

  it('budget: stops after maxToolCalls; calls past the limit get a budget-exhausted result', async () => {
    const agent = await agentWith([
      {
        toolCalls: [
          { name: 'crm__overdue_tasks', arguments: {} },
          { name: 'crm__calendar', arguments: { date: '2026-11-23' } },
        ],
      },
      { content: 'You have one overdue task; I did not get to the calendar.' },
    ]);
    const calendarBefore = bed.crm.calls.calendar ?? 0;
    const result = await agent.ask('What is on my plate?', { settings: { budget: { maxToolCalls: 1 } } });

    expect(result).toMatchObject({ stopReason: 'budget:toolCalls', toolCalls: 1, rounds: 2 });
    expect(bed.crm.calls.calendar ?? 0).toBe(calendarBefore);
    const final = agent.model.requests[1]!;
    expect(final.toolChoice).toBe('none');
    const toolMessages = final.messages.filter((message) => message.role === 'tool');
    expect(toolMessages).toHaveLength(2);
    expect(toolMessages[1]?.content).toMatch(/^Not run: the turn's tool call budget is used up/);
    expectValidToolPairing(final.messages);
  });

  it('budget: counts tokens from usage, caps max_completion_tokens by what is left, and stops at maxTokens', async () => {
    const agent = await agentWith([
      { ...findAda, usage: { prompt_tokens: 700, completion_tokens: 100 } },
      { ...findAda, usage: { prompt_tokens: 900, completion_tokens: 100 } },
      { content: 'Final answer.', usage: { prompt_tokens: 950, completion_tokens: 10 } },
    ]);
    const result = await agent.ask('Find Ada', { settings: { budget: { maxTokens: 1500 } } });

    expect(result).toMatchObject({
      stopReason: 'budget:tokens',
      answer: 'Final answer.',
      rounds: 3,
      usage: { inputTokens: 2550, outputTokens: 210, totalTokens: 2760 },
      overrun: { tokens: 1260 },
    });
    const [first, second] = agent.model.requests;
    expect(first?.options.max_completion_tokens).toBe(1500);
    expect(second?.options.max_completion_tokens).toBe(700);
  });

  it('budget: the time limit cancels a slow model call and the final answer follows', async () => {
    const agent = await agentWith([{ content: 'too late', delayMs: 20_000 }, { content: 'Answer within the time.' }]);
    const result = await agent.ask('Quick!', { settings: { budget: { maxDurationMs: 1_500 } } });

    expect(result).toMatchObject({ stopReason: 'budget:time', answer: 'Answer within the time.', rounds: 1 });
    expect(result.overrun?.time).toBeGreaterThan(0);
    const keys = agent.model.requests.map((request) => request.idempotencyKey?.split('/').at(-1));
    expect(keys).toEqual(['round-1', 'round-2']);
  });
});
