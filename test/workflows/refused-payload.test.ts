import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import type { ToolMessage } from '../../src/shared/types.js';
import { startTestAgent, type TestAgentOptions } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { transcriptQuery, type ConversationOutcome } from '../../src/workflows/definitions.js';
import { httpServer } from '../mcp/helpers.js';

/**
 * A namespace whose payload limit is lower than durable-agent's own bounds (64 KiB here, through the dev server's
 * dynamic config, which the worker reads from the namespace): Temporal refuses a result that durable-agent let
 * through. The tool is not run again, the model is told the true reason, and the worker logs it.
 */

const LIMIT_BYTES = 64 * 1024;

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;

beforeAll(async () => {
  env = await createLocalEnvironment({
    extraArgs: ['--dynamic-config-value', `limit.blobSize.error=${LIMIT_BYTES}`],
  });
  mcp = await startTestMcpServer({ transport: 'http' });
});

afterAll(async () => {
  await mcp?.close();
  await env?.teardown();
});

/** One turn with an agent of its own, which is stopped after it. */
async function runTurn(script: TestAgentOptions['script']) {
  const agent = await startTestAgent({
    env,
    mcpServers: [httpServer('test', mcp.url)],
    workerOptions: { toolResultMaxChars: 200_000 },
    script,
  });
  const stderr = vi.spyOn(process.stderr, 'write');
  try {
    const handle = await agent.startConversation(randomUUID(), {
      messages: [{ id: randomUUID(), content: 'go' }],
      closeWhenIdle: true,
    });
    const outcome = (await handle.result()) as ConversationOutcome;
    const page = await handle.query(transcriptQuery, { from: 0, limit: 100 });
    return {
      result: outcome.state.lastResult!,
      tools: page.messages.filter((message): message is ToolMessage => message.role === 'tool'),
      requests: agent.model.requests,
      log: stderr.mock.calls.map(([chunk]) => String(chunk)).join(''),
    };
  } finally {
    stderr.mockRestore();
    await agent.close();
  }
}

describe('a payload Temporal refuses anyway', () => {
  it('a refused tool result: not run again, the model is told the true reason, the worker logs it', async () => {
    const turn = await runTurn([
      // 100,000 characters: within durable-agent's bound for a result, over this namespace's limit.
      { toolCalls: [{ name: 'test__big', arguments: { chars: 100_000 } }] },
      { content: 'The result was too large.' },
    ]);

    expect(turn.result).toMatchObject({ stopReason: 'completed', answer: 'The result was too large.' });
    expect(turn.tools).toHaveLength(1);
    const [message] = turn.tools;
    expect(message?.outcome).toBe('result_too_large');
    expect(message?.content).toContain(
      'the call to test__big ran, but its result was too large to be recorded in the workflow history',
    );
    expect(message?.content).toContain('It was not run again');
    expect(message?.content).not.toContain('may or may not have taken effect');
    expect(mcp.counters.calls.big).toBe(1);
    expect(turn.requests[1]?.messages.at(-1)?.content).toBe(message?.content);
    expect(turn.log).toContain('Temporal refused the result of the tool test__big as too large for a payload');
  });

  it('a refused model result ends the turn with PayloadsTooLarge at once, not after retries', async () => {
    // 100,000 characters: within durable-agent's bound for an answer, over this namespace's limit.
    const turn = await runTurn([{ content: 'y'.repeat(100_000) }]);

    expect(turn.result.stopReason).toBe(`error:${FailureType.PayloadsTooLarge}`);
    expect(turn.result.error?.message).toContain('TMPRL1103');
    expect(turn.requests).toHaveLength(1);
    expect(turn.log).toContain('Temporal refused the result of the model call, round 1 as too large for a payload');
  });
});
