import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTimeSkippingEnvironment, startTestAgent, type TestAgent } from 'durable-agent/testing';
import type { TestWorkflowEnvironment } from '@temporalio/testing';

let env: TestWorkflowEnvironment;
let agent: TestAgent;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  agent = await startTestAgent({
    env,
    script: [
      { toolCalls: [{ name: 'everything__get-sum', arguments: { a: 2, b: 40 } }] },
      { content: 'The sum is 42.' },
    ],
    mcpServers: [
      {
        name: 'everything',
        transport: 'stdio',
        command: 'node',
        args: ['node_modules/@modelcontextprotocol/server-everything/dist/index.js', 'stdio'],
        env: {},
        cwd: undefined,
        allowTools: undefined,
        denyTools: [],
        timeoutMs: 30_000,
        disabled: false,
      },
    ],
  });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

it('adds two numbers with the sum tool', async () => {
  const result = await agent.ask('What is 2 + 40?', { settings: { budget: { maxRounds: 4 } } });
  expect(result).toMatchObject({ answer: 'The sum is 42.', stopReason: 'completed', toolCalls: 1 });
  // What reached the model: the tool's real result.
  const toolMessage = agent.model.requests[1]?.messages.find((message) => message.role === 'tool');
  expect(toolMessage?.content).toContain('42');
});
