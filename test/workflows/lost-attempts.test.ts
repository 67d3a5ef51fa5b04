import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../src/worker/mcp/config.js';
import type { JsonObject, ToolMessage } from '../../src/shared/types.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { countTestServerEvents } from '../../src/testing/mcp-test-server.js';
import { startScriptedModel, type Script, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import {
  conversationWorkflowId,
  type ConversationOutcome,
  type ConversationSettings,
} from '../../src/workflows/definitions.js';
import { testServerStdio, waitFor } from '../mcp/helpers.js';

/**
 * Issue 15, items 10 and 11: attempts lost to the worker (stopped in the middle of a call, so the attempt fails as
 * `WorkerShutdown`, as it would in a deploy) do not spend `modelAttempts` / `toolAttempts`, and a tool call that may
 * have run is never reported "unavailable". A dev server, whose sticky queues and heartbeat details behave as in
 * production (the time-skipping server keeps a stopped worker's sticky queue for good); the workers run in this
 * process and are stopped and started by the test. A SIGKILLed worker process is in the fault runs
 * (test/reliability/worker-crash.reliability.ts).
 */

let env: TestWorkflowEnvironment;
let directory: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  env = await createLocalEnvironment();
  directory = mkdtempSync(path.join(tmpdir(), 'durable-agent-lost-attempts-'));
});

afterAll(async () => {
  await Promise.allSettled(cleanups.reverse().map((cleanup) => cleanup()));
  await env?.teardown();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

type Handle = WorkflowHandle<typeof conversationWorkflow>;

/** A conversation whose worker the test replaces: `replaceWorker()` stops the running one mid-call, starts another. */
interface Run {
  model: ScriptedModel;
  handle: Handle;
  workflowId: string;
  replaceWorker(): Promise<void>;
  outcome(): Promise<ConversationOutcome>;
}

async function startRun(script: Script, settings: ConversationSettings, mcpServers: McpServerConfig[] = []) {
  const model = await startScriptedModel({ script });
  const taskQueue = `lost-attempts-${randomUUID()}`;
  let agent: TestAgent = await startTestAgent({ env, model, mcpServers, taskQueue });
  cleanups.push(async () => {
    await agent.close();
    await model.close();
  });
  const conversationId = randomUUID();
  const handle: Handle = await agent.startConversation(conversationId, {
    settings,
    messages: [{ id: 'm-1', content: 'Go.' }],
    closeWhenIdle: true,
  });
  const run: Run = {
    model,
    handle,
    workflowId: conversationWorkflowId(conversationId),
    async replaceWorker() {
      // Shutting down fails the running attempt at once ("WorkerShutdown"); Temporal retries it on the next worker.
      await agent.close();
      agent = await startTestAgent({ env, model, mcpServers, taskQueue });
    },
    outcome: () => handle.result(),
  };
  return run;
}

/** The attempt on which each activity of the run completed or failed for good, by type, in order. */
async function finalAttempts(handle: Handle): Promise<{ type: string; attempt: number }[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  const types = new Map<string, string>();
  const attempts: { type: string; attempt: number }[] = [];
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) types.set(String(event.eventId), scheduled.activityType?.name ?? '?');
    const started = event.activityTaskStartedEventAttributes;
    if (started) {
      attempts.push({ type: types.get(String(started.scheduledEventId)) ?? '?', attempt: started.attempt ?? 0 });
    }
  }
  return attempts;
}

/** A protobuf timestamp in milliseconds (0 when unset). */
function milliseconds(time: { seconds?: { toString(): string } | null; nanos?: number | null } | null | undefined) {
  return time ? Number(time.seconds?.toString() ?? 0) * 1000 + (time.nanos ?? 0) / 1e6 : 0;
}

function toolMessages(outcome: ConversationOutcome): ToolMessage[] {
  return outcome.state.transcript.filter((message): message is ToolMessage => message.role === 'tool');
}

describe('a model round whose worker is stopped again and again', () => {
  it('lost attempts: stopped during the same round more times than modelAttempts allows, the turn still answers', async () => {
    // Every attempt up to the third waits; each time, the worker running it is stopped.
    const run = await startRun([{ content: 'Still here.', delayMs: 600_000, delayAttempts: 3 }], {
      modelAttempts: 2,
    });
    for (let stop = 1; stop <= 3; stop++) {
      await waitFor(() => run.model.requestsFor(run.workflowId).length === stop, 30_000, `attempt ${stop}`);
      await run.replaceWorker();
    }
    const outcome = await run.outcome();
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', answer: 'Still here.', rounds: 1 });
    const requests = run.model.requestsFor(run.workflowId);
    expect(requests).toHaveLength(4);
    expect(new Set(requests.map((request) => request.idempotencyKey)).size).toBe(1);
    expect(await finalAttempts(run.handle)).toEqual([{ type: 'callModel', attempt: 4 }]);
  });

  it('lost attempts: a model error counts, a stopped worker does not: 1 error + 1 stop, then the answer', async () => {
    const run = await startRun(
      [{ error: { status: 500 } }, { content: 'Still here.', delayMs: 600_000, delayAttempts: 1 }],
      { modelAttempts: 2 },
    );
    await waitFor(() => run.model.requestsFor(run.workflowId).length === 2, 30_000, 'the attempt after the error');
    await run.replaceWorker();
    const outcome = await run.outcome();
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', answer: 'Still here.' });
    expect(run.model.requestsFor(run.workflowId).map((request) => request.status)[0]).toBe(500);
    expect(await finalAttempts(run.handle)).toEqual([{ type: 'callModel', attempt: 3 }]);
  });
});

describe('model errors around a lost attempt', () => {
  it('lost attempts: the count survives a lost attempt: error, stop, error ends the turn with modelAttempts: 2', async () => {
    // The second attempt's error is held back and its worker stopped meanwhile (after it heartbeated the count on).
    const run = await startRun(
      [
        { error: { status: 500 } },
        { error: { status: 500 }, delayMs: 600_000 },
        { error: { status: 500 } },
        { content: 'Too late.' },
      ],
      { modelAttempts: 2 },
    );
    await waitFor(() => run.model.requestsFor(run.workflowId).length === 2, 30_000, 'the second attempt');
    await waitFor(
      async () => {
        const pending = (await run.handle.describe()).raw.pendingActivities ?? [];
        return pending.some(
          (activity) =>
            activity.attempt === 2 && milliseconds(activity.lastHeartbeatTime) > milliseconds(activity.lastStartedTime),
        );
      },
      30_000,
      'a heartbeat of the second attempt',
    );
    await run.replaceWorker();
    const outcome = await run.outcome();
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'error:ModelServerError', answer: null });
    expect(run.model.requestsFor(run.workflowId)).toHaveLength(3);
    expect(await finalAttempts(run.handle)).toEqual([{ type: 'callModel', attempt: 3 }]);
  });
});

describe('a tool call whose worker is stopped while it runs (toolAttempts: 1)', () => {
  const script = (tool: string, args: JsonObject = {}): Script => [
    { toolCalls: [{ name: `test__${tool}`, arguments: args }] },
    { content: 'Done.' },
  ];

  it('lost attempts: a tool with side effects that may have run ends outcome_unknown, never "try again later"', async () => {
    const counterFile = path.join(directory, 'side-effects.jsonl');
    const run = await startRun(script('hang'), { toolAttempts: 1 }, [
      testServerStdio('test', counterFile, { timeoutMs: 60_000 }),
    ]);
    // The server has the request: the call may have taken effect.
    await waitFor(() => countTestServerEvents(counterFile).calls.hang === 1, 30_000, 'the hang call to arrive');
    await run.replaceWorker();
    const outcome = await run.outcome();
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', answer: 'Done.', toolCalls: 1 });
    const [message] = toolMessages(outcome);
    expect(message?.outcome).toBe('outcome_unknown');
    expect(message?.content).toMatch(/^The call to test__hang may or may not have taken effect/);
    expect(message?.content).not.toMatch(/try again later|unavailable/i);
    expect(countTestServerEvents(counterFile).calls.hang).toBe(1);
  });

  it('lost attempts: a read-only tool is simply run again on the next worker: the stop did not use up toolAttempts', async () => {
    const counterFile = path.join(directory, 'read-only.jsonl');
    const run = await startRun(script('slow', { delayMs: 2_000 }), { toolAttempts: 1 }, [
      testServerStdio('test', counterFile, { timeoutMs: 60_000 }),
    ]);
    await waitFor(() => countTestServerEvents(counterFile).calls.slow === 1, 30_000, 'the slow call to arrive');
    await run.replaceWorker();
    const outcome = await run.outcome();
    const [message] = toolMessages(outcome);
    expect(message).toMatchObject({ outcome: 'ok', content: 'slept 2000 ms' });
    expect(countTestServerEvents(counterFile).calls.slow).toBe(2);
    expect((await finalAttempts(run.handle)).filter((entry) => entry.type === 'callTool')).toEqual([
      { type: 'callTool', attempt: 2 },
    ]);
  });
});
