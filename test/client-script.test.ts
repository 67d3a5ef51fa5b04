import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

/** `npm run client -- ...` against this worker's task queue, on the dev server `connection` names. */
function client(args: string[], connection: NodeJS.ProcessEnv = { TEMPORAL_ADDRESS: env.address }) {
  const { TEMPORAL_ADDRESS: _address, TEMPORAL_PROFILE: _profile, ...inherited } = process.env;
  return run('npm', ['run', '--silent', 'client', '--', ...args], {
    cwd: repository,
    env: { ...inherited, ...connection, DURABLE_AGENT_TASK_QUEUE: agent.taskQueue },
  });
}

it('client script: npm run client -- "message" starts a conversation and prints its answer', async () => {
  const { stdout } = await client(['What is 2 + 40?']);
  const [header, answer] = stdout.trim().split('\n');
  expect(answer).toBe('Forty-two.');
  const conversationId = /^conversation (client-[0-9a-f-]+) \(completed\)$/.exec(header ?? '')?.[1];
  expect(conversationId).toBeDefined();
  // What reached the model: the message, in that conversation.
  const requests = agent.model.requestsFor(`conversation-${conversationId}`);
  expect(requests.at(-1)?.messages.at(-1)).toMatchObject({ role: 'user', content: 'What is 2 + 40?' });
});

it('client script: without a message it says what to give and exits 1', async () => {
  await expect(client([])).rejects.toMatchObject({
    code: 1,
    stderr: expect.stringContaining('Give the message to send'),
  });
});

it('client script: connects with a temporal.toml profile (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE) as Temporal tools do', async () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'client-profile-'));
  try {
    const file = path.join(folder, 'temporal.toml');
    writeFileSync(file, `[profile.local]\naddress = "${env.address}"\nnamespace = "default"\n`);
    const { stdout } = await client(['Still there?'], { TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'local' });
    expect(stdout.trim().split('\n')[1]).toBe('Forty-two.');
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
