import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { pythonEnvironment } from '../helpers/python.js';
import { killLeftovers, requireBuild, until, WorkerProcess } from '../reliability/helpers.js';
import { killAll, runCli } from './helpers.js';

/**
 * A question from a stdio server written with the official Python MCP SDK (`mcp` from PyPI, pinned in
 * test/fixtures/python-mcp/requirements.txt), asked with `ctx.elicit` as that SDK documents, as users run it: the worker
 * process with an `mcpServers` file that names only the command, the question listed by `durable-agent inputs` and
 * answered by `durable-agent answer`. The SDK offers 2026-07-28, where it cannot ask; the question arrives all the same.
 */

const fixtures = fileURLToPath(new URL('../fixtures/python-mcp/', import.meta.url));

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let tmp: string;
let python: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  requireBuild();
  python = await pythonEnvironment(
    path.join(fixtures, 'requirements.txt'),
    'test/fixtures/python-mcp (servers built on the Python MCP SDK)',
  );
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-python-questions-'));
  env = await createLocalEnvironment();
  model = await startScriptedModel({
    name: 'python server questions',
    script: (request) => {
      const last = request.messages.at(-1);
      return last?.role === 'tool'
        ? { content: `the tool said: ${typeof last.content === 'string' ? last.content : ''}` }
        : { toolCalls: [{ name: 'shop__confirm_order', arguments: { order: '981' } }] };
    },
  });
}, 300_000);

afterAll(async () => {
  await Promise.allSettled([killAll(), ...workers.map((worker) => worker.kill())]);
  killLeftovers();
  await model?.close();
  await env?.teardown();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('a Python SDK server asking with ctx.elicit, answered through the CLI', () => {
  it('the question reaches `durable-agent inputs`, and `answer` reaches the server and finishes the turn', async () => {
    const taskQueue = `python-questions-${randomUUID()}`;
    const callLog = path.join(tmp, 'calls.jsonl');
    const mcpConfigPath = path.join(tmp, 'mcp.json');
    // What an operator writes: the command, nothing about protocol versions.
    writeFileSync(
      mcpConfigPath,
      JSON.stringify({
        mcpServers: {
          shop: { command: python, args: [path.join(fixtures, 'ask_server.py')], env: { ASK_SERVER_LOG: callLog } },
        },
      }),
    );
    workers.push(
      await WorkerProcess.start({
        temporalAddress: env.address,
        taskQueue,
        modelBaseUrl: model.baseUrl,
        mcpConfigPath,
        logFile: path.join(tmp, 'worker.log'),
      }),
    );
    const cliEnv = { ...process.env, TEMPORAL_ADDRESS: env.address, DURABLE_AGENT_TASK_QUEUE: taskQueue };
    const client = new DurableAgentClient({ client: env.client, taskQueue });
    const conversationId = `python-${randomUUID()}`;

    const sent = await runCli(['send', '-c', conversationId, 'Place order 981.'], cliEnv);
    expect(sent.code, sent.stderr).toBe(ExitCode.Ok);
    const [question] = await until(async () => {
      const pending = await client.pendingInputs(conversationId);
      if (pending.length > 0) return pending;
      // A question the server failed to ask ends the turn without reaching anyone: say so instead of timing out.
      const finished = (await client.status(conversationId)).lastResult;
      if (finished !== undefined) throw new Error(`the turn ended without a question: ${finished.answer ?? ''}`);
      return undefined;
    }, 'the question of the Python server');
    expect(question).toMatchObject({ tool: 'shop__confirm_order', message: 'Place order 981?', mode: 'form' });

    const listed = await runCli(['inputs', '-c', conversationId], cliEnv);
    expect(listed.code, listed.stderr).toBe(ExitCode.Ok);
    expect(listed.stdout).toContain(`${question!.requestId}  shop__confirm_order asks: Place order 981?`);
    expect(listed.stdout).toContain('approve');

    const answered = await runCli(
      ['answer', '-c', conversationId, question!.requestId, '--accept', '{"approve": true, "note": "by noon"}'],
      cliEnv,
    );
    expect(answered).toMatchObject({
      code: ExitCode.Ok,
      stdout: `Answered ${question!.requestId} of conversation ${conversationId}: accept.\n`,
    });
    const result = await until(async () => (await client.status(conversationId)).lastResult, 'the turn result');
    expect(result.answer).toBe('the tool said: Order 981 placed (by noon)');
    // The server ran the call once and got the answer; it never failed its own question.
    expect(
      readFileSync(callLog, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([{ called: '981' }, { answered: 'accept' }]);
    expect(readFileSync(path.join(tmp, 'worker.log'), 'utf8')).not.toMatch(/NoBackChannelError|no back-channel/);
  });
});
