import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment, createTimeSkippingEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { httpServer } from '../mcp/helpers.js';

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;
let agent: TestAgent;

beforeAll(async () => {
  env = process.env.KIND === 'ts' ? await createTimeSkippingEnvironment() : await createLocalEnvironment({ extraArgs: process.env.BLOB ? ['--dynamic-config-value', `limit.blobSize.error=${process.env.BLOB}`] : [] });
  mcp = await startTestMcpServer({ transport: 'http' });
  agent = await startTestAgent({
    env,
    mcpServers: [httpServer('test', mcp.url)],
    workerOptions: { toolResultMaxChars: Number(process.env.MAXC ?? 3_000_000) },
    script: [
      { toolCalls: [{ name: 'test__big', arguments: { chars: Number(process.env.CHARS ?? 2_500_000) } }] },
      { content: 'done' },
    ],
  });
});
afterAll(async () => {
  await agent?.close();
  await mcp?.close();
  await env?.teardown();
});

it('explore', async () => {
  const result = await agent.ask('go');
  const tool = agent.model.requests.at(-1)?.messages.at(-1);
  console.log(JSON.stringify(result).slice(0, 2000));
  console.log(JSON.stringify(tool).slice(0, 600));
}, 120_000);
