import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { killLeftovers, requireBuild, TEST_SERVER, until, WorkerProcess } from './helpers.js';

/**
 * A deploy stops the worker process with SIGTERM. While a tool call waits for a person's answer to a server's question,
 * its activity long-polls the conversation; the poll must end with the call. Before, it went on after the worker had
 * closed its client: the process outlived its shutdown by up to a poll's wait and then died retrying the poll on the
 * closed connection ("Channel has been shut down", exit code 1).
 */

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let tmp: string;
const counterFile = () => path.join(tmp, 'stop.counter.jsonl');

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-worker-stop-'));
  env = await createLocalEnvironment();
  model = await startScriptedModel({
    name: 'a question in flight',
    script: [{ toolCalls: [{ name: 'test__ask_user', arguments: { message: 'Who are you?' } }] }],
  });
});

afterAll(async () => {
  killLeftovers([counterFile()]);
  await model?.close();
  await env?.teardown();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** A worker whose tool call waits for a person's answer to a server's question, on `taskQueue` of `env`. */
async function workerAsking(env: TestWorkflowEnvironment, taskQueue: string, conversation: string) {
  const mcpConfigPath = path.join(tmp, `${taskQueue}.mcp.json`);
  const logFile = path.join(tmp, `${taskQueue}.worker.log`);
  // A call timeout far beyond the wait below: a timer of the cancelled call left running would hold the process.
  // Legacy-only: the question is pushed in a 2025-11-25 session, so the worker's tool activity waits for the answer.
  const server = {
    command: process.execPath,
    args: [TEST_SERVER, '--legacy-only'],
    env: { MCP_TEST_COUNTER_FILE: counterFile() },
  };
  writeFileSync(mcpConfigPath, JSON.stringify({ mcpServers: { test: { ...server, timeoutMs: 600_000 } } }));
  const worker = await WorkerProcess.start({
    temporalAddress: env.address,
    taskQueue,
    modelBaseUrl: model.baseUrl,
    mcpConfigPath,
    logFile,
  });
  const client = new DurableAgentClient({ client: env.client, taskQueue });
  await client.send(conversation, 'Ask me who I am.');
  await until(async () => (await client.pendingInputs(conversation)).length > 0, 'the server to ask its question', {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  return { worker, log: () => readFileSync(logFile, 'utf8') };
}

describe('a worker stopped with SIGTERM', () => {
  it('while a server waits for an answer: the worker exits with code 0, its poll of the conversation ended', async () => {
    const { worker, log } = await workerAsking(env, 'worker-stop', 'stopped-while-asking');

    // A grace period longer than the server's long poll of an update (20 s): a poll left running ends within it and
    // then fails, and shorter than the call's timeout.
    const exit = await worker.stop(30_000);

    expect(exit).toBe('exit code 0');
    expect(log()).not.toContain('Channel has been shut down');
  }, 150_000);

  it('while Temporal is down and a server waits for an answer: the worker exits with code 0', async () => {
    // A cluster of its own, stopped below.
    let own: TestWorkflowEnvironment | undefined = await createLocalEnvironment();
    try {
      const { worker, log } = await workerAsking(own, 'worker-stop-outage', 'stopped-during-outage');
      // Temporal goes away: the activity's poll of the conversation is refused (UNAVAILABLE) and retried by the
      // worker's client, a retry that fell due after the stopping worker had closed that client.
      await own.teardown();
      own = undefined;
      await sleep(1_500);
      const exit = await worker.stop(60_000);

      expect(exit).toBe('exit code 0');
      expect(log()).not.toContain('Channel has been shut down');
    } finally {
      await own?.teardown();
    }
  }, 150_000);
});
