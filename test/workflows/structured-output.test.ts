import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startTestAgent, type TestAgent, type TestAgentOptions } from '../../src/testing/agent.js';
import type { ConversationOutcome, OutputFormat } from '../../src/workflows/definitions.js';

let env: TestWorkflowEnvironment;
const agents: TestAgent[] = [];
let counter = 0;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.close()));
  await env?.teardown();
});

async function agentWith(script: TestAgentOptions['script']) {
  // No workflow cached: every task replays the history so far, so a correction that did not replay fails the test.
  const agent = await startTestAgent({ env, script, workerOptions: { worker: { maxCachedWorkflows: 0 } } });
  agents.push(agent);
  return agent;
}

const weather: OutputFormat = {
  name: 'weather',
  schema: {
    type: 'object',
    properties: { city: { type: 'string' }, celsius: { type: 'number' } },
    required: ['city', 'celsius'],
    additionalProperties: false,
  },
};

/** Ask one message with its own output format (per ask, not in the settings). */
async function askWithOutput(agent: TestAgent, content: string, output: OutputFormat) {
  const id = `structured-${++counter}`;
  const handle = await agent.startConversation(id, {
    messages: [{ id: `${id}-m`, content, output }],
    closeWhenIdle: true,
  });
  return ((await handle.result()) as ConversationOutcome).state.lastResult!;
}

describe('structured output', () => {
  it('valid on the first try: sent as response_format, parsed into the result', async () => {
    const agent = await agentWith([{ content: '{"city": "Oslo", "celsius": -3}' }]);
    const result = await agent.ask('Weather in Oslo?', { settings: { output: weather } });

    expect(result).toMatchObject({ stopReason: 'completed', rounds: 1, output: { city: 'Oslo', celsius: -3 } });
    expect(result.answer).toBe('{"city": "Oslo", "celsius": -3}');
    expect(agent.model.requests[0]!.options).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema: weather.schema, strict: false } },
    });
  });

  it('a text turn sends no response_format and its result has no output', async () => {
    const agent = await agentWith([{ content: 'Cold.' }]);
    const result = await agent.ask('Weather in Oslo?');
    expect(result.output).toBeUndefined();
    expect(agent.model.requests[0]!.options).not.toHaveProperty('response_format');
  });

  it('corrected once: the problem goes back to the model, and the second answer is parsed', async () => {
    const agent = await agentWith([
      { content: '{"city": "Oslo"}' },
      { content: '```json\n{"city": "Oslo", "celsius": -3}\n```' },
    ]);
    const result = await askWithOutput(agent, 'Weather in Oslo?', weather);

    expect(result).toMatchObject({ stopReason: 'completed', rounds: 2, output: { city: 'Oslo', celsius: -3 } });
    const second = agent.model.requests[1]!;
    expect(second.messages.at(-2)).toEqual({ role: 'assistant', content: '{"city": "Oslo"}' });
    expect(second.messages.at(-1)).toMatchObject({ role: 'user' });
    expect(second.messages.at(-1)!.content).toContain("must have required property 'celsius'");
    expect(second.options).toHaveProperty('response_format');
  });

  it('corrections exhausted: the turn ends with OutputInvalid and the last answer, after maxCorrections + 1 calls', async () => {
    const agent = await agentWith([{ content: 'It is cold.' }, { content: '{"celsius": "cold"}' }]);
    const result = await askWithOutput(agent, 'Weather in Oslo?', { ...weather, maxCorrections: 1 });

    expect(result).toMatchObject({ stopReason: 'error:OutputInvalid', rounds: 2, answer: '{"celsius": "cold"}' });
    expect(result.output).toBeUndefined();
    expect(result.error?.message).toMatch(/^The answer does not match the output schema after 1 correction: /);
    expect(result.error?.message).toContain('/celsius must be number');
    expect(agent.model.requests[1]!.messages.at(-1)!.content).toContain('the answer is not JSON');
  });

  it('corrections are model calls in the budget: at maxRounds the final answer is checked once, not corrected', async () => {
    const agent = await agentWith([{ content: 'nope' }, { content: '{"city": "Oslo", "celsius": -3}' }]);
    const result = await agent.ask('Weather in Oslo?', { settings: { output: weather, budget: { maxRounds: 1 } } });

    expect(result).toMatchObject({ stopReason: 'budget:rounds', rounds: 2, output: { city: 'Oslo', celsius: -3 } });
    expect(agent.model.requests[1]!.options).toHaveProperty('response_format');
  });
});
