import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { freePort, publishedServerEntry, useProcesses, waitForHttp } from '../mcp/helpers.js';
import { activitiesOf, historyEvents, requireBuild, until } from '../reliability/helpers.js';
import { cliPath, killAll, spawnTracked, type RunningProcess } from './helpers.js';

/**
 * The "done when": server-everything's `simulate-research-query` (a tool that requires a task) returns its
 * report to the model although `durable-agent dev` is SIGKILLed two seconds into the task. server-everything runs over
 * Streamable HTTP in a process of its own (a stdio server would die with the worker, and its tasks with it); it keeps
 * tasks per session, so the next `dev` asks about the task in the session that created it, resumed by id.
 */

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let tmp: string;
let url: string;
const start = useProcesses();

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-task-kill-'));
  const port = await freePort();
  const everything = start(process.execPath, [publishedServerEntry('server-everything'), 'streamableHttp'], {
    PORT: String(port),
  });
  everything.stdout?.resume();
  everything.stderr?.resume();
  url = `http://127.0.0.1:${port}/mcp`;
  [env, model] = await Promise.all([
    createLocalEnvironment(),
    startScriptedModel({
      name: 'task kill',
      script: (request) => {
        const last = request.messages.at(-1);
        if (last?.role === 'tool') return { content: 'reported' };
        return {
          toolCalls: [{ name: 'everything__simulate-research-query', arguments: { topic: 'crash safety' } }],
        };
      },
    }),
    waitForHttp(url),
  ]);
});

afterAll(async () => {
  await killAll();
  await model?.close();
  await env?.teardown();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function startDev(environment: NodeJS.ProcessEnv): Promise<RunningProcess> {
  const dev = spawnTracked(process.execPath, [cliPath, 'dev'], environment);
  await until(() => dev.output().includes('Worker: polling') || dev.child.exitCode !== null, 'dev to poll');
  if (!dev.output().includes('Worker: polling')) throw new Error(`dev did not start: ${dev.output()}`);
  return dev;
}

describe('a task call survives `dev` SIGKILLed while the task works', () => {
  it('SIGKILL two seconds into the task: the next dev polls the same task and the report reaches the model', async () => {
    const taskQueue = `task-kill-${randomUUID()}`;
    const mcpConfig = path.join(tmp, 'mcp.json');
    writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { everything: { url } } }));
    const environment: NodeJS.ProcessEnv = {
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DURABLE_AGENT_'))),
      TEMPORAL_ADDRESS: env.address,
      DURABLE_AGENT_TASK_QUEUE: taskQueue,
      OPENAI_BASE_URL: model.baseUrl,
      OPENAI_API_KEY: 'test',
      DURABLE_AGENT_MODEL: 'scripted-model',
      DURABLE_AGENT_MCP_CONFIG: mcpConfig,
    };
    const first = await startDev(environment);
    const conversationId = randomUUID();
    const handle = await env.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      taskQueue,
      workflowId: conversationWorkflowId(conversationId),
      args: [{ conversationId, messages: [{ id: 'm-1', content: 'Research it.' }] }],
    });
    // The call's activity completed with the task: its id is in history.
    await until(async () => {
      const call = activitiesOf(await historyEvents(handle)).find((activity) => activity.type === 'callTool');
      return call?.completed === true;
    }, 'the task to be created');
    await sleep(2_000);
    first.child.kill('SIGKILL');
    await first.exited;

    // server-everything's task takes about four seconds: it finishes while no worker runs.
    await sleep(3_000);
    const second = await startDev(environment);
    const report = await until(() => {
      const requests = model.requestsFor(conversationWorkflowId(conversationId));
      const tool = requests.flatMap((request) => request.messages).find((message) => message.role === 'tool');
      return typeof tool?.content === 'string' ? tool.content : undefined;
    }, 'the report to reach the model');
    expect(report).toContain('# Research Report: crash safety');
    expect(report).toContain('Stage 4: Generating report ✓');

    // One call, one task: the call's activity ran once, and only polls and the result followed.
    const activities = activitiesOf(await historyEvents(handle));
    expect(activities.filter((activity) => activity.type === 'callTool')).toHaveLength(1);
    expect(activities.filter((activity) => activity.type === 'toolTaskResult').length).toBeGreaterThanOrEqual(1);
    second.child.kill('SIGKILL');
    await second.exited;
  });
});
