#!/usr/bin/env node
// Records the histories that test/replay/replay.test.ts replays: representative conversations run by the real worker on
// a Temporal dev server, with the scripted model and our MCP test server over stdio. Each run's history is written to
// test/fixtures/histories/<scenario>.json (continue-as-new: <scenario>.run-<n>.json, one file per run) in the JSON
// format of `temporal workflow show --output json`, so the Temporal CLI and Web UI can read the files too.
//
//   npx tsc -p tsconfig.build.json && node scripts/record-histories.mjs [scenario ...]
//
// Regenerate only when the workflow changed on purpose and before the first release tag; after a release, an
// incompatible change needs `patched()` or worker versioning instead, and the old fixtures must keep replaying. Say in
// the commit message that the fixtures were regenerated and why (docs/reliability.md, "Replay").
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import OpenAI from 'openai';
import { McpPool } from '../dist/mcp/pool.js';
// Not `dist/testing/index.js`: its agent module does not load under plain Node yet (a named import from the CommonJS
// @temporalio/proto), so this script wires the worker itself, as startTestAgent does.
import { createLocalEnvironment } from '../dist/testing/environment.js';
import { startScriptedModel } from '../dist/testing/scripted-model/index.js';
import { createAgentWorker } from '../dist/worker.js';
import {
  askUpdate,
  conversationWorkflowId,
  endSignal,
  interruptSignal,
  statusQuery,
  userMessageSignal,
} from '../dist/workflows/definitions.js';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const fixtures = path.join(root, 'test/fixtures/histories');

/** Our MCP test server over stdio, built into dist/ (echo, set_value, increment, slow, hang, ...). */
export const testServer = {
  name: 'test',
  transport: 'stdio',
  command: process.execPath,
  args: [path.join(root, 'dist/testing/mcp-test-server.js')],
  env: {},
  cwd: undefined,
  allowTools: undefined,
  denyTools: [],
  timeoutMs: 60_000,
  disabled: false,
};

const call = (name, args = {}) => ({ name: `test__${name}`, arguments: args });

/**
 * Each scenario: the model's script for its conversation, and how the conversation is driven. `run` returns when the
 * conversation's last run has closed, so its history is complete, and returns the handle of the first run.
 */
const scenarios = {
  'plain-turn': {
    script: [{ content: 'Hello! How can I help?' }],
    async run(agent, id) {
      const handle = await agent.startConversation(id, { settings: { systemPrompt: 'Be brief.' } });
      await handle.executeUpdate(askUpdate, { args: [{ id: 'm-1', content: 'Hi' }] });
      await handle.signal(endSignal, {});
      await handle.result();
      return handle;
    },
  },
  'parallel-tools': {
    script: [
      {
        toolCalls: [
          call('echo', { text: 'first' }),
          call('set_value', { key: 'colour', value: 'blue' }),
          call('slow', { delayMs: 300 }),
        ],
      },
      { toolCalls: [call('increment', { key: 'visits' })] },
      { content: 'Echoed, stored, waited and counted.' },
    ],
    async run(agent, id) {
      const handle = await agent.startConversation(id, {
        messages: [{ id: 'm-1', content: 'Do three things at once, then count.' }],
        closeWhenIdle: true,
      });
      await handle.result();
      return handle;
    },
  },
  'budget-exhausted': {
    script: [
      { toolCalls: [call('echo', { text: 'one' })] },
      { toolCalls: [call('echo', { text: 'two' })] },
      { content: 'I ran out of budget; here is what I have.' },
    ],
    async run(agent, id) {
      const handle = await agent.startConversation(id, {
        settings: { budget: { maxRounds: 2 } },
        messages: [{ id: 'm-1', content: 'Keep echoing.' }],
        closeWhenIdle: true,
      });
      await handle.result();
      return handle;
    },
  },
  interrupt: {
    script: [{ toolCalls: [call('hang')] }, { content: 'Something else, then.' }],
    async run(agent, id) {
      const handle = await agent.startConversation(id);
      await handle.signal(userMessageSignal, { id: 'm-1', content: 'Do the slow thing.' });
      await waitForStatus(handle, (status) => status.currentTurn?.activity.startsWith('tools') ?? false);
      await handle.signal(interruptSignal, { reason: 'changed my mind' });
      await waitForStatus(handle, (status) => status.phase === 'idle' && status.turns === 1);
      await handle.executeUpdate(askUpdate, { args: [{ id: 'm-2', content: 'Something else.' }] });
      await handle.signal(endSignal, {});
      await handle.result();
      return handle;
    },
  },
  'continue-as-new': {
    script: [{ toolCalls: [call('echo', { text: 'carried' })] }, { content: 'answer one' }, { content: 'answer two' }],
    async run(agent, id) {
      const handle = await agent.startConversation(id, {
        settings: { maxTurnsPerRun: 1 },
        messages: [
          { id: 'm-1', content: 'one' },
          { id: 'm-2', content: 'two' },
        ],
        closeWhenIdle: true,
      });
      await handle.result(); // follows the runs to the last one
      return handle;
    },
  },
};

async function waitForStatus(handle, done) {
  for (let attempt = 0; attempt < 600; attempt++) {
    const status = await handle.query(statusQuery);
    if (done(status)) return status;
    await sleep(100);
  }
  throw new Error(`status never matched; last: ${JSON.stringify(await handle.query(statusQuery))}`);
}

/** The histories of every run of a workflow, oldest first (continue-as-new links them). */
async function runHistories(client, workflowId, firstRunId) {
  const histories = [];
  let runId = firstRunId;
  while (runId) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    histories.push(history);
    const last = history.events?.at(-1);
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return histories;
}

async function main(names) {
  const chosen = names.length > 0 ? names : Object.keys(scenarios);
  for (const name of chosen) {
    if (!(name in scenarios))
      throw new Error(`unknown scenario ${name}; scenarios: ${Object.keys(scenarios).join(', ')}`);
  }
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const conversationId = (name) => `replay-${name}`;
  // One scripted model for all scenarios: each conversation has its own cursor, so each follows its own script.
  const scripts = new Map(chosen.map((name) => [conversationWorkflowId(conversationId(name)), scenarios[name].script]));
  const script = (request, { stepIndex }) => scripts.get(request.conversation)?.[stepIndex];

  mkdirSync(fixtures, { recursive: true });
  const env = await createLocalEnvironment();
  const model = await startScriptedModel({ script });
  const mcp = new McpPool([testServer]);
  const taskQueue = `record-histories-${process.pid}`;
  const worker = await createAgentWorker({
    connection: env.nativeConnection,
    taskQueue,
    openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
    defaultModel: 'scripted-model',
    mcp,
    temporal: env.client,
  });
  const startConversation = (id, input = {}) =>
    env.client.workflow.start('conversationWorkflow', {
      taskQueue,
      workflowId: conversationWorkflowId(id),
      args: [{ conversationId: id, ...input }],
    });
  try {
    await worker.runUntil(async () => {
      for (const name of chosen) {
        const started = Date.now();
        const id = conversationId(name);
        const handle = await scenarios[name].run({ startConversation }, id);
        const histories = await runHistories(env.client, handle.workflowId, handle.firstExecutionRunId);
        histories.forEach((history, index) => {
          const file = histories.length === 1 ? `${name}.json` : `${name}.run-${index + 1}.json`;
          // The SDK's converter writes the JSON of `temporal workflow show --output json`, indented by two.
          writeFileSync(path.join(fixtures, file), `${historyToJSON(history)}\n`);
          console.log(`${file}: ${history.events?.length ?? 0} events`);
        });
        console.log(`${name}: recorded in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
    });
  } finally {
    await mcp.close();
    await model.close();
    await env.teardown();
  }
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
