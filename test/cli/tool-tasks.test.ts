import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import type { JsonObject } from '../../src/shared/types.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { publishedServerEntry, stdioServer } from '../mcp/helpers.js';
import { killAll, runCli } from './helpers.js';

/**
 * The published reference server, unmodified: its `simulate-research-query` requires a task (`execution.taskSupport:
 * "required"`), works through four stages of a second each and returns a report; `ambiguous` asks the person which
 * meaning of the topic they mean first (by `elicitation/create` during `tasks/result`, 2025-11-25). On the dev server,
 * so the timers between polls are real.
 */

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let client: DurableAgentClient;
let cliEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({
    env,
    mcpServers: [stdioServer('everything', process.execPath, [publishedServerEntry('server-everything'), 'stdio'])],
    script: (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return { content: 'reported' };
      const topic =
        last?.content === 'research python' ? { topic: 'python', ambiguous: true } : { topic: 'durable execution' };
      return { toolCalls: [{ name: 'everything__simulate-research-query', arguments: topic as JsonObject }] };
    },
  });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
  cliEnv = { ...process.env, TEMPORAL_ADDRESS: env.address, DURABLE_AGENT_TASK_QUEUE: agent.taskQueue };
});

afterEach(killAll);

afterAll(async () => {
  await killAll();
  await agent?.close();
  await env?.teardown();
});

/** What the model got back for its call: the tool message of the request that followed it. */
function reachedTheModel(conversationId: string): string | undefined {
  const requests = agent.model.requestsFor(conversationWorkflowId(conversationId));
  const tool = requests.flatMap((request) => request.messages).find((message) => message.role === 'tool');
  return typeof tool?.content === 'string' ? tool.content : undefined;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 600; attempt++) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('server-everything simulate-research-query, a tool that requires a task', () => {
  it('the task id is recorded at once, the turn polls it on timers, and the report reaches the model', async () => {
    const id = randomUUID();
    const handle = await agent.startConversation(id, { messages: [{ id: 'm1', content: 'research it' }] });
    // While the task works, status says so.
    const activity = await until('the wait in status', async () => {
      const current = (await client.status(id)).currentTurn?.activity;
      return current?.startsWith('waiting for task') ? current : undefined;
    });
    expect(activity).toMatch(/^waiting for task \w+ of everything__simulate-research-query \(\d+ polls?, last status /);
    // The Web UI's current details show it too.
    const details = await until('the wait in the Web UI details', async () => {
      const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      return metadata.currentDetails?.includes('waiting for task') ? metadata.currentDetails : undefined;
    });
    expect(details).toMatch(/\*\*Turn 1\*\* · waiting for task \w+ of everything__simulate-research-query/);
    const report = await until('the report', async () => reachedTheModel(id));
    expect(report).toContain('# Research Report: durable execution');
    expect(report).toContain('Stage 4: Generating report ✓');

    // History: the call's activity returned the task (its id), polls followed, and then the result was fetched.
    const history = await handle.fetchHistory();
    const scheduled = (history.events ?? []).flatMap((event) => {
      const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
      return type ? [type] : [];
    });
    expect(scheduled[0]).toBe('callModel');
    expect(scheduled[1]).toBe('callTool');
    expect(scheduled.filter((type) => type === 'pollToolTask').length).toBeGreaterThanOrEqual(1);
    expect(scheduled.filter((type) => type === 'toolTaskResult')).toHaveLength(1);
    expect(scheduled.filter((type) => type === 'callTool')).toHaveLength(1);
    expect((history.events ?? []).some((event) => event.timerStartedEventAttributes)).toBe(true);
  });

  it('ambiguous: the task asks the person through `inputs` / `answer`, and the answer shapes the report', async () => {
    const id = randomUUID();
    await agent.startConversation(id, { messages: [{ id: 'm1', content: 'research python' }] });
    const [question] = await until('the question', async () => {
      const pending = await client.pendingInputs(id);
      return pending.length > 0 ? pending : undefined;
    });
    expect(question).toMatchObject({ tool: 'everything__simulate-research-query', mode: 'form' });
    expect(question!.message).toContain('could have multiple interpretations');
    const listed = await runCli(['inputs', '-c', id], cliEnv);
    expect(listed.stdout).toContain(question!.requestId);
    const answered = await runCli(
      ['answer', '-c', id, question!.requestId, '--accept', '{"interpretation":"snake"}'],
      cliEnv,
    );
    expect(answered.code).toBe(ExitCode.Ok);
    const report = await until('the report', async () => reachedTheModel(id));
    expect(report).toContain('# Research Report: python (snake)');
    expect(report).toContain('`input_required` → `working` → `completed`');
  });
});
