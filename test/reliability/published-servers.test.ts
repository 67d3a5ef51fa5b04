import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerConfig } from '../../src/worker/mcp/config.js';
import { findFreePort, isPortOpen } from '../../src/temporal-servers/ports.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import type { Script } from '../../src/testing/scripted-model/index.js';
import { expectValidToolPairing, toolResults } from '../helpers/transcript.js';

/**
 * Issue 8, item 4: MCP servers no one here wrote, in a whole turn (workflow, activities, pool, scripted model):
 * `@modelcontextprotocol/server-everything` over stdio and over Streamable HTTP, and a write-then-read chain through
 * `@modelcontextprotocol/server-filesystem` in a temporary directory. The assertions are on what reached the model:
 * the scripted model records every request.
 */

const require = createRequire(import.meta.url);
const entry = (name: string) =>
  path.join(path.dirname(require.resolve(`@modelcontextprotocol/${name}/package.json`)), 'dist/index.js');
const common = { allowTools: undefined, denyTools: [], timeoutMs: 60_000, disabled: false };
const stdio = (name: string, args: string[]): McpServerConfig => ({
  ...common,
  name,
  transport: 'stdio',
  command: process.execPath,
  args,
  env: {},
  cwd: undefined,
});

let env: TestWorkflowEnvironment;
let tmp: string;
let httpEverything: ChildProcess | undefined;
let httpPort: number;
const agents: TestAgent[] = [];

beforeAll(async () => {
  tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-agent-published-')));
  env = await createLocalEnvironment();
  httpPort = await findFreePort();
  httpEverything = spawn(process.execPath, [entry('server-everything'), 'streamableHttp'], {
    env: { ...process.env, PORT: String(httpPort) },
    stdio: 'ignore',
  });
  for (let attempt = 0; !(await isPortOpen(httpPort)); attempt++) {
    if (attempt > 600 || httpEverything.exitCode !== null) throw new Error('server-everything (HTTP) did not start');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  await Promise.allSettled(agents.map((agent) => agent.close()));
  httpEverything?.kill('SIGKILL');
  await env?.teardown();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function agentWith(script: Script, server: McpServerConfig): Promise<TestAgent> {
  const agent = await startTestAgent({ env, script, mcpServers: [server] });
  agents.push(agent);
  return agent;
}

const contentOf = (agent: TestAgent, request: number) =>
  toolResults(agent.model.requests[request]!.messages).map((entry) => entry.content);

describe('published MCP servers in a turn', () => {
  it.each([
    ['stdio', () => stdio('everything', [entry('server-everything'), 'stdio'])],
    [
      'Streamable HTTP',
      (): McpServerConfig => ({
        ...common,
        name: 'everything',
        transport: 'http',
        url: `http://127.0.0.1:${httpPort}/mcp`,
        headers: {},
      }),
    ],
  ] as const)('server-everything over %s: its real results reach the model', async (_transport, server) => {
    const agent = await agentWith(
      [
        {
          toolCalls: [
            { name: 'everything__get-sum', arguments: { a: 2, b: 40 } },
            { name: 'everything__echo', arguments: { message: 'durable' } },
            { name: 'everything__get-structured-content', arguments: { location: 'Chicago' } },
          ],
        },
        { content: 'Two and forty make 42.' },
      ],
      server(),
    );
    const result = await agent.ask('Add 2 and 40, echo a word and get the weather in Chicago.');

    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Two and forty make 42.', toolCalls: 3 });
    // The first request offered the server's own tools, with their published schemas.
    const offered = agent.model.requests[0]!.tools!.flatMap((tool) =>
      tool.type === 'function' ? [tool.function] : [],
    );
    expect(offered.find((tool) => tool.name === 'everything__get-sum')?.parameters).toMatchObject({
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    const [sum, echo, weather] = contentOf(agent, 1);
    expect(sum).toBe('The sum of 2 and 40 is 42.');
    expect(echo).toBe('Echo: durable');
    expect(JSON.parse(weather!)).toMatchObject({ temperature: expect.any(Number), conditions: expect.any(String) });
    expectValidToolPairing(agent.model.requests[1]!.messages);
  });

  it('server-filesystem: a write, read and list chain in a temp directory; the model answers from the file', async () => {
    const directory = mkdtempSync(path.join(tmp, 'files-'));
    const file = path.join(directory, 'todo.txt');
    const agent = await agentWith(
      [
        { toolCalls: [{ name: 'files__write_file', arguments: { path: file, content: 'buy milk\nwrite tests\n' } }] },
        { toolCalls: [{ name: 'files__read_text_file', arguments: { path: file } }] },
        { toolCalls: [{ name: 'files__list_directory', arguments: { path: directory } }] },
        // The answer quotes what the read returned, as a model would.
        (request) => ({
          content: `Your list: ${toolResults(request.messages)[1]?.content.trim().replace(/\n/g, ', ')}.`,
        }),
      ],
      stdio('files', [entry('server-filesystem'), directory]),
    );
    const result = await agent.ask('Write my to-do list, then read it back.');

    expect(result).toMatchObject({ stopReason: 'completed', rounds: 4, toolCalls: 3 });
    expect(result.answer).toBe('Your list: buy milk, write tests.');
    expect(readFileSync(file, 'utf8')).toBe('buy milk\nwrite tests\n');
    const [written, read, listed] = contentOf(agent, 3);
    expect(written).toMatch(/Successfully wrote to .*todo\.txt/);
    expect(read).toBe('buy milk\nwrite tests\n');
    expect(listed).toContain('[FILE] todo.txt');
    expectValidToolPairing(agent.model.requests[3]!.messages);
  });
});
