import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../src/agent-client/index.js';
import { loadConfig } from '../src/config.js';
import { startTestAgent, type TestAgent } from '../src/testing/agent.js';
import type { ScriptStep } from '../src/testing/scripted-model/script.js';
import { createLocalEnvironment } from '../src/testing/environment.js';
import { conversationWorkflowId } from '../src/workflows/definitions.js';
import { poll } from './agent-client/helpers.js';

/**
 * examples/python/conversation.py, a client written from docs/protocol.md with Temporal's Python SDK, run against the
 * dev server and a worker of this project with the scripted model. Its virtual environment is cached (keyed by the
 * requirements file), so only the first run installs `temporalio`.
 */

const example = fileURLToPath(new URL('../examples/python/', import.meta.url));
const requirements = path.join(example, 'requirements.txt');
const conversationId = `python-${process.pid}`;

const scripts: Record<string, ScriptStep[]> = {
  [conversationWorkflowId(conversationId)]: [
    { content: 'Hello! How can I help?' },
    { content: 'Order 981 left the warehouse today.' },
    // Interrupted long before it would answer.
    { content: 'All your orders, compared.', delayMs: 120_000 },
  ],
  [conversationWorkflowId(`${conversationId}-idle`)]: [{ content: 'I will remember 42.' }, { content: 'You said 42.' }],
};

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let python: string;

beforeAll(async () => {
  python = await pythonEnvironment();
  env = await createLocalEnvironment();
  agent = await startTestAgent({
    env,
    script: (request, { stepIndex }) => scripts[request.conversation]?.[stepIndex],
  });
}, 300_000);

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

it('the Python example starts, sends, asks, reads the transcript, interrupts and ends a conversation', async () => {
  const run = await runPython([path.join(example, 'conversation.py'), conversationId], {
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    DURABLE_AGENT_TASK_QUEUE: agent.taskQueue,
  });
  expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
  const steps = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { step: string } & Record<string, unknown>);
  expect(steps).toEqual([
    { step: 'sent', messageId: `${conversationId}-1` },
    { step: 'asked', turn: 2, answer: 'Order 981 left the warehouse today.', stopReason: 'completed' },
    { step: 'asked again', sameResult: true },
    {
      step: 'transcript',
      messages: [
        'system: Be brief.',
        'user: Hello!',
        'assistant: Hello! How can I help?',
        'user: Where is my order 981?',
        'assistant: Order 981 left the warehouse today.',
      ],
    },
    { step: 'interrupted', turn: 3, stopReason: 'cancelled', answer: null },
    { step: 'ended', refused: true, reason: `${conversationId} has ended` },
    { step: 'status', phase: 'ended', turns: 3 },
    { step: 'reopened', turn: 2, answer: 'You said 42.', transcript: 4 },
  ]);

  // What the TypeScript client sees of the same conversation.
  const client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
  expect(await client.status(conversationId)).toMatchObject({ phase: 'ended', open: false, turns: 3 });
  const requests = agent.model.requests.filter(
    (request) => request.conversation === conversationWorkflowId(conversationId),
  );
  expect(requests.map((request) => request.messages.at(-1)?.content)).toEqual([
    'Hello!',
    'Where is my order 981?',
    'Compare every order I ever made.',
  ]);
  // The reopened run answered with the closed run's transcript, and is a run of its own.
  const reopened = agent.model.requests.filter(
    (request) => request.conversation === conversationWorkflowId(`${conversationId}-idle`),
  );
  expect(reopened.at(-1)?.messages.map((message) => message.content)).toEqual([
    'Remember 42.',
    'I will remember 42.',
    'What number?',
  ]);
  const runsOf = async (workflowId: string) => {
    const runs: string[] = [];
    for await (const execution of env.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      runs.push(execution.runId);
    }
    return runs;
  };
  await poll(
    () => runsOf(conversationWorkflowId(`${conversationId}-idle`)),
    (runs) => runs.length === 2,
  );
});

/**
 * The Python of a virtual environment with the example's requirements, created once per requirements file under the
 * cache directory. A machine without python3 fails here, by name: CI has Python, and a skipped example proves nothing.
 */
async function pythonEnvironment(): Promise<string> {
  const found = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) {
    throw new Error(
      'python3 is needed to run examples/python (the Python example test): install Python 3.9 or later (CI has ' +
        `3.11) and make python3 available on the PATH. (${found.error?.message ?? found.stderr})`,
    );
  }
  const key = createHash('sha256').update(readFileSync(requirements)).digest('hex').slice(0, 16);
  const venv = path.join(loadConfig().cacheDir, 'python-example', `venv-${key}`);
  const executable = path.join(venv, 'bin', 'python');
  if (existsSync(executable)) return executable;
  // Built beside its place and renamed into it, so a failed or concurrent install never leaves half a venv there.
  const building = `${venv}.building-${process.pid}`;
  await fs.rm(building, { recursive: true, force: true });
  await fs.mkdir(path.dirname(venv), { recursive: true });
  await check(runCommand('python3', ['-m', 'venv', building]), 'python3 -m venv');
  await check(
    runCommand(path.join(building, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '-r', requirements]),
    `pip install -r ${requirements}`,
  );
  try {
    await fs.rename(building, venv);
  } catch (error) {
    // Another run put its venv there first: use that one.
    await fs.rm(building, { recursive: true, force: true });
    if (!existsSync(executable)) throw error;
  }
  return executable;
}

async function check(run: Promise<CommandRun>, what: string): Promise<void> {
  const { code, stdout, stderr } = await run;
  if (code !== 0) throw new Error(`${what} exited with ${code}:\n${stdout}${stderr}`);
}

interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the example with a time limit, killing it (and failing) if it hangs. */
async function runPython(args: string[], childEnv: NodeJS.ProcessEnv): Promise<CommandRun> {
  return await runCommand(python, args, childEnv, 45_000);
}

function runCommand(command: string, args: string[], childEnv = process.env, timeoutMs = 280_000): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} took longer than ${timeoutMs} ms:\n${stdout}${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
