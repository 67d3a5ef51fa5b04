import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toOpenAIMessage } from '../../src/worker/activities/model/call.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { thinkingSignature } from '../../src/testing/scripted-model/anthropic-messages.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { askUpdate, endSignal, transcriptQuery } from '../../src/workflows/definitions.js';
import { expectValidToolPairing } from '../helpers/transcript.js';
import {
  callsPerTool,
  killLeftovers,
  requireBuild,
  until,
  within,
  WorkerProcess,
  writeMcpConfig,
  type WorkerEnvironment,
} from './helpers.js';

/**
 * A conversation on Anthropic with extended thinking runs a three-round tool chain in a worker process that is killed
 * with SIGKILL while the second round's tool runs; a fresh worker finishes the turn. The thinking blocks survive in the
 * transcript and reach the model again, signed, in every later round; the non-idempotent first call ran once.
 */

type Handle = WorkflowHandle<typeof conversationWorkflow>;
const SLOW_MS = 4_000;
const THOUGHTS = ['Count the order first.', 'Wait for the slow step.', 'Say it is done.'];

const tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-anthropic-crash-'));
const counterFile = path.join(tmp, 'counter.jsonl');
const workers: WorkerProcess[] = [];
let env: TestWorkflowEnvironment | undefined;
let model: ScriptedModel | undefined;

beforeAll(async () => {
  requireBuild();
  [env, model] = await Promise.all([
    createLocalEnvironment(),
    startScriptedModel({
      name: 'the thinking chain',
      script: [
        { reasoning: THOUGHTS[0], toolCalls: [{ name: 'test__increment', arguments: { key: 'orders' } }] },
        { reasoning: THOUGHTS[1], toolCalls: [{ name: 'test__slow', arguments: { delayMs: SLOW_MS } }] },
        { reasoning: THOUGHTS[2], toolCalls: [{ name: 'test__echo', arguments: { text: 'done' } }] },
        { content: 'The order is counted and done.' },
      ],
    }),
  ]);
});

afterAll(async () => {
  await Promise.allSettled(workers.map((worker) => worker.kill()));
  killLeftovers([counterFile]);
  await model?.close();
  await env?.teardown();
  rmSync(tmp, { recursive: true, force: true });
});

describe('Anthropic with thinking, worker killed mid-chain', () => {
  it('anthropic crash: a fresh worker finishes the chain; thinking is sent back signed, each completed call ran once', async () => {
    const mcpConfigPath = path.join(tmp, 'mcp.json');
    writeMcpConfig(mcpConfigPath, counterFile);
    const { address, client } = env!;
    const taskQueue = `anthropic-crash-${randomUUID()}`;
    // The same options for the first worker and for the one that replaces it after the kill.
    const workerOptions: WorkerEnvironment = {
      temporalAddress: address,
      taskQueue,
      modelBaseUrl: model!.baseUrl,
      mcpConfigPath,
      logFile: path.join(tmp, 'worker.log'),
      extraEnvironment: {
        ANTHROPIC_BASE_URL: model!.anthropicBaseUrl,
        ANTHROPIC_API_KEY: 'test',
        DURABLE_AGENT_MODEL: 'anthropic:claude-scripted',
      },
    };

    const first = await WorkerProcess.start(workerOptions);
    workers.push(first);
    const handle: Handle = await client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      taskQueue,
      workflowId: 'conversation-anthropic-crash',
      args: [{ conversationId: 'anthropic-crash', settings: { thinking: { budgetTokens: 2048 } } }],
    });
    const asked = handle.executeUpdate(askUpdate, { args: [{ id: 'm-1', content: 'Count the order.' }] });
    asked.catch(() => undefined); // awaited below; a failure must not count as unhandled while the kill happens

    await until(() => callsPerTool(counterFile).slow === 1, 'the slow tool to start', { timeoutMs: 60_000 });
    await first.kill();
    workers.push(await WorkerProcess.start(workerOptions));
    const turn = await within(asked, 180_000, 'the turn after the kill');

    expect(turn.answer).toBe('The order is counted and done.');
    const calls = callsPerTool(counterFile);
    expect(calls.increment).toBe(1);
    expect(calls.echo).toBe(1);
    // The read-only slow tool was in flight at the kill: it runs again.
    expect(calls.slow).toBe(2);

    const transcript = (await handle.query(transcriptQuery, { from: 0 })).messages;
    expectValidToolPairing(transcript.map(toOpenAIMessage));
    const reasoning = transcript.flatMap((message) => (message.role === 'assistant' ? (message.reasoning ?? []) : []));
    expect(reasoning).toEqual(
      THOUGHTS.map((thinking) => ({ type: 'anthropic_thinking', thinking, signature: thinkingSignature(thinking) })),
    );
    const last = model!.requests.at(-1)!;
    expect(last.api).toBe('messages');
    const sentBack = (last.body.messages as { role: string; content: { type: string; signature?: string }[] }[])
      .filter((turnMessage) => turnMessage.role === 'assistant')
      .map((turnMessage) => turnMessage.content[0]);
    expect(sentBack).toEqual(
      THOUGHTS.map((thinking) => ({ type: 'thinking', thinking, signature: thinkingSignature(thinking) })),
    );
    await handle.signal(endSignal, {});
  });
});
