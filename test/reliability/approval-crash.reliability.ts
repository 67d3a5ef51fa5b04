import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import {
  approveUpdate,
  type ConversationStatus,
  endSignal,
  pollEventsUpdate,
  statusQuery,
  transcriptQuery,
} from '../../src/workflows/definitions.js';
import { expectValidToolPairing } from '../helpers/transcript.js';
import {
  callsPerTool,
  killLeftovers,
  requireBuild,
  ResultRows,
  TEST_SERVER,
  until,
  within,
  WorkerProcess,
} from './helpers.js';

/**
 * Issue 17: the worker process is killed (SIGKILL) while a tool call waits for a person's approval; a fresh worker
 * process takes over, the approval comes to it, and the turn finishes with nothing lost: the pending call is still
 * pending (same call id, arguments and reason), the call that needed no approval is not run again, and the approved
 * call (`increment`, not safe to repeat) runs exactly once.
 */

type Handle = WorkflowHandle<typeof conversationWorkflow>;

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let tmp: string;
const workers: WorkerProcess[] = [];
const counterFiles: string[] = [];
const rows = new ResultRows('approval-crash');

const ANSWER = 'Counted the order.';

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-approval-crash-'));
  env = await createLocalEnvironment();
  model = await startScriptedModel({
    script: [
      {
        toolCalls: [
          { name: 'test__increment', arguments: { key: 'orders' } },
          { name: 'test__echo', arguments: { text: 'noted' } },
        ],
      },
      { content: ANSWER },
    ],
    name: 'approval crash',
  });
});

afterAll(async () => {
  rows.write();
  await Promise.allSettled(workers.map((worker) => worker.kill()));
  killLeftovers(counterFiles);
  await model?.close();
  await env?.teardown();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function completedActivities(handle: Handle): Promise<number> {
  const { events } = await handle.fetchHistory();
  return (events ?? []).filter((event) => event.activityTaskCompletedEventAttributes).length;
}

async function statusWhen(handle: Handle, done: (status: ConversationStatus) => boolean, what: string) {
  return until(
    async () => {
      const status = await handle.query(statusQuery);
      return done(status) ? status : undefined;
    },
    what,
    { timeoutMs: 120_000, intervalMs: 200 },
  );
}

describe('the worker dies while a tool call awaits approval', () => {
  it('a fresh worker keeps the call pending; the approval finishes the turn, the call runs exactly once', async () => {
    const name = 'approval';
    const conversationId = `crash-${name}`;
    const taskQueue = `crash-${name}-${randomUUID()}`;
    const counterFile = path.join(tmp, `${name}.counter.jsonl`);
    const mcpConfigPath = path.join(tmp, `${name}.mcp.json`);
    counterFiles.push(counterFile);
    const server = { command: process.execPath, args: [TEST_SERVER], env: { MCP_TEST_COUNTER_FILE: counterFile } };
    writeFileSync(
      mcpConfigPath,
      JSON.stringify({ mcpServers: { test: { ...server, requireApproval: ['increment'] } } }),
    );
    const startWorker = async () => {
      const worker = await WorkerProcess.start({
        temporalAddress: env.address,
        taskQueue,
        modelBaseUrl: model.baseUrl,
        mcpConfigPath,
        logFile: path.join(tmp, `${name}.worker.log`),
      });
      workers.push(worker);
      return worker;
    };

    const first = await startWorker();
    const handle: Handle = await env.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      taskQueue,
      workflowId: `conversation-${conversationId}`,
      args: [{ conversationId, messages: [{ id: 'm-1', content: 'Count this order.' }] }],
    });
    const waiting = await statusWhen(
      handle,
      (status) => status.phase === 'awaiting_approval' && (callsPerTool(counterFile).echo ?? 0) === 1,
      'the increment call to await approval (and echo to run)',
    );
    const [pending] = waiting.pendingApprovals!;
    expect(pending).toMatchObject({ tool: 'test__increment', arguments: { key: 'orders' } });
    // Kill only once echo's result is in history (the model call's and echo's activities completed): a read-only call
    // whose result was not recorded yet runs again on the new worker, at least once by design, which is not this run.
    await until(async () => (await completedActivities(handle)) >= 2, "echo's result in history", {
      timeoutMs: 120_000,
      intervalMs: 200,
    });

    await first.kill();
    const killedAt = Date.now();
    await startWorker();
    // The new worker rebuilds the wait from history: the same call waits, nothing ran meanwhile.
    const rebuilt = await statusWhen(handle, (status) => status.phase === 'awaiting_approval', 'the new worker');
    expect(rebuilt.pendingApprovals).toEqual([pending]);
    expect(callsPerTool(counterFile).increment ?? 0).toBe(0);

    const decision = await within(
      handle.executeUpdate(approveUpdate, { args: [{ callId: pending!.callId, by: 'ops@example.com' }] }),
      60_000,
      'the approval',
    );
    expect(decision).toMatchObject({ decision: 'approved', by: 'ops@example.com', callId: pending!.callId });
    const done = await statusWhen(handle, (status) => status.phase === 'idle' && status.turns === 1, 'the turn');
    const recoverySeconds = (Date.now() - killedAt) / 1000;

    expect(done.lastResult).toMatchObject({ stopReason: 'completed', answer: ANSWER, toolCalls: 2 });
    const calls = callsPerTool(counterFile);
    expect(calls).toMatchObject({ increment: 1, echo: 1 });
    const { messages } = await handle.query(transcriptQuery, { from: 0 });
    expect(messages.filter((message) => message.role === 'tool').map((message) => message.outcome)).toEqual([
      'ok',
      'ok',
    ]);
    const { events } = await handle.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] });
    expect(events.filter((event) => event.type.startsWith('approval_')).map((event) => event.type)).toEqual([
      'approval_requested',
      'approval_decided',
    ]);
    for (const request of model.requestsFor(handle.workflowId)) expectValidToolPairing(request.messages);
    await handle.signal(endSignal, {});
    await within(handle.result(), 60_000, 'the conversation to close');

    rows.add({
      group: 'Worker process killed (SIGKILL) while a tool call awaits approval (issue 17)',
      fault: 'while increment (not safe to repeat) awaits approval, after echo (no approval needed) ran',
      outcome: `a fresh worker showed the same pending call; approved by ops@example.com: completed "${ANSWER}"`,
      counts: `tool calls ${done.lastResult!.toolCalls} · tool runs: increment ${calls.increment}, echo ${calls.echo} (each once)`,
      recoverySeconds,
      passed: true,
    });
  });
});
