import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';

let env: TestWorkflowEnvironment;
const agents: TestAgent[] = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.close()));
  await env?.teardown();
});

async function agentWith(script: Parameters<typeof startTestAgent>[0]['script']) {
  const agent = await startTestAgent({ env, script });
  agents.push(agent);
  return agent;
}

describe('a turn without tools', () => {
  it('answers with the model content and reports usage and a completed stop', async () => {
    const agent = await agentWith([{ content: 'Hello there!', usage: { prompt_tokens: 11, completion_tokens: 3 } }]);
    const result = await agent.ask('Hi', { settings: { systemPrompt: 'Be brief.' } });
    expect(result.answer).toBe('Hello there!');
    expect(result.stopReason).toBe('completed');
    expect(result.rounds).toBe(1);
    expect(result.toolCalls).toBe(0);
    expect(result.usage).toEqual({ inputTokens: 11, outputTokens: 3, totalTokens: 14 });
    const [request] = agent.model.requests;
    expect(request?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(request?.idempotencyKey).toMatch(/^conversation-[^/]+\/[^/]+\/turn-1\/round-1$/);
  });
});
