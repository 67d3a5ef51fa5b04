import { describe, expect, it } from 'vitest';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { expectValidToolPairing, toolResults } from '../helpers/transcript.js';

const bed = useTimeSkippingWithCrm();

const { agentWith } = bed;

describe('agent chains against a real MCP server', () => {
  it('chain: finds a user, then looks up their company (two sequential calls)', async () => {
    const before = { ...bed.crm.calls };
    const agent = await agentWith([
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { toolCalls: [{ name: 'crm__get_company', arguments: { companyId: 'c-9' } }] },
      { content: 'Ada works at Analytical Engines Ltd in London.' },
    ]);
    const result = await agent.ask('Where does Ada work?');

    expect(result).toMatchObject({
      answer: 'Ada works at Analytical Engines Ltd in London.',
      stopReason: 'completed',
      rounds: 3,
      toolCalls: 2,
    });
    expect((bed.crm.calls.find_user ?? 0) - (before.find_user ?? 0)).toBe(1);
    expect((bed.crm.calls.get_company ?? 0) - (before.get_company ?? 0)).toBe(1);

    const requests = agent.model.requests;
    expect(requests).toHaveLength(3);
    expect(requests[0]?.tools?.map((tool) => tool.type === 'function' && tool.function.name)).toContain(
      'crm__find_user',
    );
    const second = requests[1]!.messages;
    expect(toolResults(second)).toHaveLength(1);
    expect(JSON.parse(toolResults(second)[0]!.content)).toEqual({ id: 'u-1', name: 'Ada Lovelace', companyId: 'c-9' });
    const third = requests[2]!.messages;
    expect(JSON.parse(toolResults(third)[1]!.content)).toMatchObject({ name: 'Analytical Engines Ltd' });
    for (const request of requests) expectValidToolPairing(request.messages);
  });

  it('chain: finds a user, fetches the record and updates a field (three calls)', async () => {
    const agent = await agentWith([
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { toolCalls: [{ name: 'crm__get_record', arguments: { userId: 'u-1' } }] },
      { toolCalls: [{ name: 'crm__update_field', arguments: { userId: 'u-1', field: 'plan', value: 'pro' } }] },
      { content: "Done: Ada's plan is now pro." },
    ]);
    const updatesBefore = bed.crm.calls.update_field ?? 0;
    const result = await agent.ask('Upgrade Ada to the pro plan.');

    expect(result).toMatchObject({ stopReason: 'completed', rounds: 4, toolCalls: 3 });
    expect(bed.crm.records.get('u-1')?.plan).toBe('pro');
    expect((bed.crm.calls.update_field ?? 0) - updatesBefore).toBe(1);
    const last = agent.model.requests.at(-1)!.messages;
    expect(toolResults(last).map((entry) => JSON.parse(entry.content) as unknown)).toEqual([
      { id: 'u-1', name: 'Ada Lovelace', companyId: 'c-9' },
      { plan: 'basic', email: 'ada@example.com' },
      { ok: true, userId: 'u-1', field: 'plan', value: 'pro' },
    ]);
    expectValidToolPairing(last);
  });

  it("chain: fetches overdue tasks and tomorrow's calendar in parallel in one round", async () => {
    const agent = await agentWith([
      {
        toolCalls: [
          { name: 'crm__overdue_tasks', arguments: {} },
          { name: 'crm__calendar', arguments: { date: '2026-11-23' } },
        ],
      },
      { content: 'One overdue task; a design review at 10:00 tomorrow.' },
    ]);
    const result = await agent.ask('What do I have on my plate?');

    expect(result).toMatchObject({ stopReason: 'completed', rounds: 2, toolCalls: 2 });
    const [, second] = agent.model.requests;
    const assistant = second!.messages.find((message) => message.role === 'assistant');
    const callIds = assistant?.role === 'assistant' ? (assistant.tool_calls ?? []).map((call) => call.id) : [];
    expect(callIds).toHaveLength(2);
    // Results come back in the order the model asked for them, whatever order the calls finished in.
    expect(toolResults(second!.messages).map((entry) => entry.id)).toEqual(callIds);
    expect(toolResults(second!.messages)[0]!.content).toContain('quarterly report');
    expect(toolResults(second!.messages)[1]!.content).toContain('Design review');
  });
});

describe('tool calls the model gets wrong', () => {
  it('malformed JSON arguments become an error result for the model and never reach the server', async () => {
    const before = bed.crm.calls.find_user ?? 0;
    const agent = await agentWith([
      { toolCalls: [{ name: 'crm__find_user', arguments: '{"name": "Ada"' }] },
      { content: 'Sorry, let me try again later.' },
    ]);
    const result = await agent.ask('Find Ada');
    expect(result).toMatchObject({ stopReason: 'completed', toolCalls: 0 });
    expect(bed.crm.calls.find_user ?? 0).toBe(before);
    const [result0] = toolResults(agent.model.requests[1]!.messages);
    expect(result0?.content).toMatch(/arguments for crm__find_user are not valid JSON/);
  });

  it('an unknown tool name becomes an error result that lists the tools that exist', async () => {
    const agent = await agentWith([
      { toolCalls: [{ name: 'crm__delete_everything', arguments: {} }] },
      { content: 'That tool does not exist.' },
    ]);
    await agent.ask('Delete everything');
    const [entry] = toolResults(agent.model.requests[1]!.messages);
    expect(entry?.content).toMatch(/no tool named "crm__delete_everything"/);
    expect(entry?.content).toContain('crm__find_user');
  });

  it('an isError result from the server is a normal tool result the model sees', async () => {
    const agent = await agentWith([
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Nobody' } }] },
      { content: 'I could not find that user.' },
    ]);
    const result = await agent.ask('Find Nobody');
    expect(result.stopReason).toBe('completed');
    expect(toolResults(agent.model.requests[1]!.messages)[0]?.content).toBe('No user matches "Nobody".');
  });
});
