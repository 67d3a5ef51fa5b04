import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../src/client/index.js';
import { startTestAgent, type TestAgent } from '../src/testing/agent.js';
import type { ScriptStep } from '../src/testing/scripted-model/script.js';
import { PriceTable } from '../src/worker/pricing/price-table.js';
import { createLocalEnvironment } from '../src/testing/environment.js';
import { conversationWorkflowId } from '../src/workflows/definitions.js';
import { poll } from './client/helpers.js';
import { pythonEnvironment, runCommand } from './helpers/python.js';

/**
 * examples/python/conversation.py, a client written from docs/protocol.md with Temporal's Python SDK, run against the
 * dev server and a worker of this project with the scripted model. Its virtual environment is cached (keyed by the
 * requirements file, test/helpers/python.ts), so only the first run installs `temporalio`.
 */

const example = fileURLToPath(new URL('../examples/python/', import.meta.url));
const requirements = path.join(example, 'requirements.txt');
const conversationId = `python-${process.pid}`;

/** $1 per million input tokens, $2 per million output: each priced call costs $0.001 + $0.001. */
const prices = new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } });
const usage = { prompt_tokens: 1000, completion_tokens: 500 };

const scripts: Record<string, ScriptStep[]> = {
  [conversationWorkflowId(conversationId)]: [
    { content: 'Hello! How can I help?' },
    { content: 'Order 981 left the warehouse today.' },
    // Interrupted long before it would answer.
    { content: 'All your orders, compared.', delayMs: 120_000 },
  ],
  [conversationWorkflowId(`${conversationId}-idle`)]: [{ content: 'I will remember 42.' }, { content: 'You said 42.' }],
  // Priced below, so the conversation's cost limit holds the second turn's call.
  [conversationWorkflowId(`${conversationId}-budget`)]: [
    { content: 'A teapot.', usage },
    { content: 'It shipped on Monday.', usage },
  ],
};

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let python: string;

beforeAll(async () => {
  python = await pythonEnvironment(requirements, 'examples/python (the Python example test)');
  env = await createLocalEnvironment();
  agent = await startTestAgent({
    env,
    script: (request, { stepIndex }) => scripts[request.conversation]?.[stepIndex],
    workerOptions: { prices },
  });
}, 300_000);

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

it('the Python example starts, sends, asks, reads the transcript, interrupts, ends, reopens, and approves a held call', async () => {
  const childEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: env.address,
    TEMPORAL_NAMESPACE: 'default',
    DURABLE_AGENT_TASK_QUEUE: agent.taskQueue,
  };
  // A time limit, so a hung example fails instead of holding the run.
  const run = await runCommand(python, [path.join(example, 'conversation.py'), conversationId], childEnv, 45_000);
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
    { step: 'spent', priced: true },
    { step: 'held', kind: 'budget', tool: 'budget:conversationCost', turn: 2, limitUsd: 0.000001 },
    { step: 'approved', decision: 'approved', maxCostUsd: 0.01, sameDecision: true },
    { step: 'answered', turn: 2, stopReason: 'completed', answer: 'It shipped on Monday.' },
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
