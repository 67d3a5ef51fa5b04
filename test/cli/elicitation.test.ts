import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import type { InputRequest } from '../../src/workflows/definitions.js';
import { publishedServerEntry, stdioServer } from '../mcp/helpers.js';
import { killAll, runCli } from './helpers.js';

/**
 * The published reference server, unmodified: its `trigger-elicitation-request` tool asks the person for a form of
 * fields (text, email, dates, numbers, enums) during the call; the question is listed and answered through the CLI.
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
      if (last?.role === 'tool') return { content: 'done' };
      return last?.content === 'open a page'
        ? {
            toolCalls: [
              {
                name: 'everything__trigger-url-elicitation',
                arguments: { url: 'https://example.com/consent', message: 'Open the consent page.' },
              },
            ],
          }
        : { toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] };
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

const cli = (...args: string[]) => runCli(args, cliEnv);

async function question(conversationId: string): Promise<InputRequest> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const [pending] = await client.pendingInputs(conversationId);
    if (pending !== undefined) return pending;
    await sleep(100);
  }
  throw new Error('server-everything asked no question');
}

async function toolResult(conversationId: string): Promise<string> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const tool = (await client.fullTranscript(conversationId)).find((message) => message.role === 'tool');
    if (typeof tool?.content === 'string') return tool.content;
    await sleep(100);
  }
  throw new Error('the tool call did not finish');
}

describe('server-everything asks, the CLI answers', () => {
  it('inputs lists the question with its fields; answer --accept JSON reaches the server', async () => {
    const id = randomUUID();
    await agent.startConversation(id, { messages: [{ id: 'm1', content: 'ask me' }] });
    const request = await question(id);
    expect(request).toMatchObject({ tool: 'everything__trigger-elicitation-request', mode: 'form' });

    // `list --status awaiting_input` finds it (visibility is eventually consistent: ask until it does).
    let waiting: Array<{ conversationId: string; status: string }> = [];
    for (let attempt = 0; attempt < 100 && !waiting.some((entry) => entry.conversationId === id); attempt++) {
      if (attempt > 0) await sleep(100);
      const run = await cli('list', '--status', 'awaiting_input', '--json');
      expect(run.code).toBe(ExitCode.Ok);
      waiting = JSON.parse(run.stdout) as typeof waiting;
    }
    expect(waiting.find((entry) => entry.conversationId === id)).toMatchObject({ status: 'awaiting_input' });

    const listed = await cli('inputs', '-c', id);
    expect(listed.code).toBe(ExitCode.Ok);
    expect(listed.stdout).toContain(
      `${request.requestId}  everything__trigger-elicitation-request asks: Please provide`,
    );
    expect(listed.stdout).toMatch(/^ {2}name \(string, required\) String$/m);
    expect(listed.stdout).toContain(`durable-agent answer -c ${id} ${request.requestId}`);
    const json = await cli('inputs', '-c', id, '--json');
    expect(JSON.parse(json.stdout)).toEqual([request]);

    // Content the schema refuses: exit 2, and the question is still pending.
    const invalid = await cli('answer', '-c', id, request.requestId, '--accept', '{"name":"Ada","email":"nope"}');
    expect(invalid.code).toBe(ExitCode.Usage);
    expect(invalid.stderr).toContain('"email" must be a valid email');
    expect((await client.pendingInputs(id)).map((pending) => pending.requestId)).toEqual([request.requestId]);
    expect((await cli('answer', '-c', id, request.requestId, '--accept', '--decline')).code).toBe(ExitCode.Usage);

    const answered = await cli(
      'answer',
      '-c',
      id,
      request.requestId,
      '--accept',
      '{"name":"Ada Lovelace","check":true,"email":"ada@example.com","integer":7}',
      '--by',
      'ada',
    );
    expect(answered).toMatchObject({
      code: ExitCode.Ok,
      stdout: `Answered ${request.requestId} of conversation ${id}: accept.\n`,
    });
    const result = await toolResult(id);
    expect(result).toContain('User provided the requested information');
    expect(result).toContain('- Name: Ada Lovelace');
    expect(result).toContain('- Email: ada@example.com');
    expect(result).toContain('- Favorite Integer: 7');

    // Answered: not pending any more.
    const again = await cli('answer', '-c', id, request.requestId, '--decline');
    expect(again.code).toBe(ExitCode.NotFound);
    expect(again.stderr).toContain('was answered already');
    expect((await cli('inputs', '-c', id)).stdout).toBe(`Conversation ${id} has no question waiting for an answer.\n`);
  });

  it('answer --decline reaches the server as a decline', async () => {
    const id = randomUUID();
    await agent.startConversation(id, { messages: [{ id: 'm1', content: 'ask me' }] });
    const request = await question(id);
    expect((await cli('answer', '-c', id, request.requestId, '--decline')).code).toBe(ExitCode.Ok);
    expect(await toolResult(id)).toContain('User declined to provide the requested information');
  });

  it('URL mode: inputs shows the page to open; answer --accept (no content) completes the flow', async () => {
    const id = randomUUID();
    await agent.startConversation(id, { messages: [{ id: 'm1', content: 'open a page' }] });
    const request = await question(id);
    expect(request).toMatchObject({
      mode: 'url',
      url: 'https://example.com/consent',
      message: 'Open the consent page.',
    });
    expect((await cli('inputs', '-c', id)).stdout).toContain('  open: https://example.com/consent');
    const withContent = await cli('answer', '-c', id, request.requestId, '--accept', '{"name":"x"}');
    expect(withContent.code).toBe(ExitCode.Usage);
    expect((await cli('answer', '-c', id, request.requestId, '--accept')).code).toBe(ExitCode.Ok);
    expect(await toolResult(id)).toContain('User completed the URL elicitation flow');
  });
});
