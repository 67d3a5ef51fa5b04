import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startModernMcpServer, type RunningModernServer } from '../../src/testing/mcp-modern-server.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { killLeftovers, requireBuild, until, WorkerProcess } from '../reliability/helpers.js';
import { killAll, runCli } from './helpers.js';

/**
 * A 2026-07-28 server's question (`input_required`) on the dev server, with the worker as users run it: the worker is
 * killed while the question waits, and nothing is sent to the server again until the answer exists; the answer comes
 * through `durable-agent answer`.
 */

let env: TestWorkflowEnvironment;
let server: RunningModernServer;
let model: ScriptedModel;
let tmp: string;
let client: DurableAgentClient;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-server-questions-'));
  env = await createLocalEnvironment();
  server = await startModernMcpServer();
  model = await startScriptedModel({
    name: 'server questions',
    script: (request) => {
      const last = request.messages.at(-1);
      return last?.role === 'tool'
        ? { content: `the tool said: ${typeof last.content === 'string' ? last.content : ''}` }
        : { toolCalls: [{ name: 'modern__ask_name', arguments: { message: 'Who signs?' } }] };
    },
  });
});

afterAll(async () => {
  await Promise.allSettled([killAll(), ...workers.map((worker) => worker.kill())]);
  killLeftovers();
  await Promise.allSettled([model?.close(), server?.close()]);
  await env?.teardown();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('a question by input_required survives the worker and is answered through the CLI', () => {
  it('the worker is killed while the question waits; nothing is re-sent until `answer` gives the answer', async () => {
    const taskQueue = `server-questions-${randomUUID()}`;
    const mcpConfigPath = path.join(tmp, 'mcp.json');
    writeFileSync(mcpConfigPath, JSON.stringify({ mcpServers: { modern: { url: server.url } } }));
    const workerOptions = {
      temporalAddress: env.address,
      taskQueue,
      modelBaseUrl: model.baseUrl,
      mcpConfigPath,
      logFile: path.join(tmp, 'worker.log'),
    };
    const startWorker = async () => workers[workers.push(await WorkerProcess.start(workerOptions)) - 1]!;
    client = new DurableAgentClient({ client: env.client, taskQueue });
    const cliEnv = { ...process.env, TEMPORAL_ADDRESS: env.address, DURABLE_AGENT_TASK_QUEUE: taskQueue };

    const first = await startWorker();
    const conversationId = randomUUID();
    const handle = await env.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      taskQueue,
      workflowId: `conversation-${conversationId}`,
      args: [{ conversationId, messages: [{ id: 'm-1', content: 'Sign it.' }] }],
    });
    const [question] = await until(async () => {
      const pending = await client.pendingInputs(conversationId);
      return pending.length > 0 ? pending : undefined;
    }, 'the question');
    expect(question).toMatchObject({ tool: 'modern__ask_name', message: 'Who signs?', mode: 'form' });
    expect(server.counters.calls.ask_name).toBe(1);

    await first.kill();
    await startWorker();
    // The new worker rebuilds the wait from history; no activity is open, so nothing goes to the server meanwhile.
    expect((await client.status(conversationId)).phase).toBe('awaiting_input');
    expect(await client.pendingInputs(conversationId)).toEqual([question]);
    expect((await handle.describe()).raw.pendingActivities ?? []).toEqual([]);
    await sleep(2_000);
    expect(server.counters.calls.ask_name).toBe(1);

    const listed = await runCli(['inputs', '-c', conversationId], cliEnv);
    expect(listed.code).toBe(ExitCode.Ok);
    expect(listed.stdout).toContain(`${question!.requestId}  modern__ask_name asks: Who signs?`);
    expect(listed.stdout).toContain('waits until answered');

    const answered = await runCli(
      ['answer', '-c', conversationId, question!.requestId, '--accept', '{"name":"Ada"}', '--by', 'ada'],
      cliEnv,
    );
    expect(answered).toMatchObject({
      code: ExitCode.Ok,
      stdout: `Answered ${question!.requestId} of conversation ${conversationId}: accept.\n`,
    });
    const result = await until(async () => (await client.status(conversationId)).lastResult, 'the turn result');
    expect(result.answer).toBe('the tool said: Hello, Ada');
    expect(server.counters.calls.ask_name).toBe(2);
  });
});
