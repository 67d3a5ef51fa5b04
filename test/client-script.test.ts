import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../src/testing/agent.js';
import { createLocalEnvironment } from '../src/testing/environment.js';

const run = promisify(execFile);
const repository = new URL('..', import.meta.url);

let env: TestWorkflowEnvironment;
let agent: TestAgent;

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script: [{ content: 'Forty-two.' }] });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

/** `npm run client -- ...` against this dev server and this worker's task queue. */
function client(...args: string[]) {
  return run('npm', ['run', '--silent', 'client', '--', ...args], {
    cwd: repository,
    env: { ...process.env, TEMPORAL_ADDRESS: env.address, DURABLE_AGENT_TASK_QUEUE: agent.taskQueue },
  });
}

it('client script: npm run client -- "message" starts a conversation and prints its answer', async () => {
  const { stdout } = await client('What is 2 + 40?');
  const [header, answer] = stdout.trim().split('\n');
  expect(answer).toBe('Forty-two.');
  const conversationId = /^conversation (client-[0-9a-f-]+) \(completed\)$/.exec(header ?? '')?.[1];
  expect(conversationId).toBeDefined();
  // What reached the model: the message, in that conversation.
  const requests = agent.model.requestsFor(`conversation-${conversationId}`);
  expect(requests.at(-1)?.messages.at(-1)).toMatchObject({ role: 'user', content: 'What is 2 + 40?' });
});

it('client script: without a message it says what to give and exits 1', async () => {
  await expect(client()).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringContaining('Give the message to send'),
  });
});
