import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import type { ChatMessage } from '../../src/shared/types.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import type { Script } from '../../src/testing/scripted-model/script.js';
import { defineSubAgent } from '../../src/worker/tools/index.js';
import { httpServer } from '../mcp/helpers.js';
import { until } from '../reliability/helpers.js';

/**
 * A server's question (MCP elicitation) during a sub-agent's tool call is the calling conversation's: listed there,
 * answered there, and the answer reaches the sub-agent's tool. On the dev server, as the conversation's own questions.
 * The server is legacy-only, so the question is pushed in a 2025-11-25 session while the sub-agent's tool call waits.
 */

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;
let agent: TestAgent;
let client: DurableAgentClient;

const lastTool = (messages: { role: string; content?: unknown }[]) => {
  const last = messages.at(-1);
  return last?.role === 'tool' ? String(last.content) : undefined;
};

/** The conversation asks the sub-agent; the sub-agent calls `ask_user`; each answers with its tool's result. */
const script: Script = (request) => {
  const toolResult = lastTool(request.messages);
  if (toolResult !== undefined) return { content: `heard: ${toolResult}` };
  return request.conversation.includes('/agent-')
    ? { toolCalls: [{ name: 'test__ask_user', arguments: { message: 'Who are you?' } }] }
    : { toolCalls: [{ name: 'agent__greeter', arguments: { task: 'Find out who the user is.' } }] };
};

beforeAll(async () => {
  env = await createLocalEnvironment();
  mcp = await startTestMcpServer({ transport: 'http', legacyOnly: true });
  agent = await startTestAgent({
    env,
    mcpServers: [httpServer('test', mcp.url)],
    script,
    workerOptions: {
      tools: [defineSubAgent({ name: 'greeter', description: 'Greets.', settings: { tools: ['test__ask_user'] } })],
    },
  });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await mcp?.close();
  await env?.teardown();
});

it("a server's question inside a sub-agent is asked and answered in the calling conversation", async () => {
  const conversationId = randomUUID();
  await agent.startConversation(conversationId, { messages: [{ id: 'm1', content: 'hello' }] });
  const status = await until(async () => {
    const current = await client.status(conversationId);
    return current.pendingInputs?.length ? current : undefined;
  }, 'the question');
  expect(status.phase).toBe('awaiting_input');
  const [request] = status.pendingInputs!;
  expect(request).toMatchObject({ tool: 'test__ask_user', server: 'test', message: 'Who are you?' });

  await client.answerInput(conversationId, request!.requestId, { action: 'accept', content: { name: 'Ada' } });
  const finished = await until(async () => {
    const current = await client.status(conversationId);
    return current.lastResult ? current : undefined;
  }, 'the turn result');

  expect(finished.lastResult).toMatchObject({ stopReason: 'completed' });
  const transcript: ChatMessage[] = await client.fullTranscript(conversationId);
  const subAgentResult = transcript.find((message) => message.role === 'tool');
  expect(subAgentResult).toMatchObject({ name: 'agent__greeter', outcome: 'ok' });
  // The sub-agent's answer quotes its tool's result, which carries what the person answered.
  expect(subAgentResult!.content).toContain('Ada');
});
