import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { poll, ScriptBook } from '../client/helpers.js';
import { toolResults } from '../helpers/transcript.js';
import { httpServer, publishedServerEntry, stdioServer } from '../mcp/helpers.js';
import { cliPath, killAll, shellQuote, spawnTracked, type RunningProcess } from './helpers.js';

/**
 * `durable-agent chat` asks MCP servers' questions (elicitation) inline, as it asks approvals: our test server's
 * `ask_user` (form mode: a name, required, and an integer age), pushed in a 2025-11-25 session (the server is
 * legacy-only), and the published server-everything's `trigger-url-elicitation` (URL mode), on the dev server, in a
 * pseudo-terminal.
 */

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;
let agent: TestAgent;
let client: DurableAgentClient;
let cliEnv: NodeJS.ProcessEnv;
const book = new ScriptBook('chat-elicitation');

beforeAll(async () => {
  env = await createLocalEnvironment();
  mcp = await startTestMcpServer({ transport: 'http', legacyOnly: true });
  agent = await startTestAgent({
    env,
    script: book.script,
    mcpServers: [
      // set_value waits for approval: with ask_user in one round, the chat asks both, one at a time.
      httpServer('test', mcp.url, { requireApproval: ['set_value'] }),
      stdioServer('everything', process.execPath, [publishedServerEntry('server-everything'), 'stdio']),
    ],
  });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
  cliEnv = { ...process.env, TEMPORAL_ADDRESS: env.address, DURABLE_AGENT_TASK_QUEUE: agent.taskQueue };
});

afterEach(killAll);

afterAll(async () => {
  await killAll();
  await agent?.close();
  await mcp?.close();
  await env?.teardown();
});

/** `durable-agent chat` in a pseudo-terminal (util-linux `script`), answering as `tester`. */
function chatInTerminal(conversationId: string): RunningProcess {
  const command = [process.execPath, cliPath, 'chat', '--conversation', conversationId, '--by', 'tester']
    .map(shellQuote)
    .join(' ');
  return spawnTracked('script', ['-qfec', command, '/dev/null'], cliEnv);
}

const askUser = { toolCalls: [{ name: 'test__ask_user', arguments: { message: 'Who are you?' } }] };
const NAME = 'name (string, required) Name: ';
const AGE = 'age (integer): ';
const count = (text: string, part: string) => text.split(part).length - 1;
const prompts = (chat: RunningProcess) => count(chat.output(), 'you> ');
const settle = { timeout: 60_000, interval: 100 };
/** What the tool answered, as the model got it in its `request`-th request (the transcript's latest tool message). */
const toolResultOf = (id: string, request: number) =>
  toolResults(
    agent.model.requests.filter((entry) => entry.conversation === `conversation-${id}`)[request]!.messages,
  ).at(-1)!.content;

it('form mode: one prompt per field with its type, asked again when wrong; a JSON line; /decline', async () => {
  const id = book.conversation('form', [
    askUser,
    { content: 'Hello Ada.' },
    askUser,
    { content: 'Hello Alan.' },
    askUser,
    { content: 'As you wish.' },
  ]);
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);

  chat.write('Greet me.\r');
  await expect.poll(() => chat.output(), settle).toContain('? test__ask_user asks: Who are you?');
  expect(chat.output()).toContain('  age (integer)');
  await expect.poll(() => chat.output(), settle).toContain(NAME);
  chat.write('\r');
  await expect.poll(() => chat.output(), settle).toContain('name is required.');
  chat.write('Ada\r');
  await expect.poll(() => chat.output(), settle).toContain(AGE);
  chat.write('thirty\r');
  await expect.poll(() => chat.output(), settle).toContain('age: expected an integer, got thirty.');
  chat.write('36\r');
  await expect.poll(() => chat.output(), settle).toContain('answered by tester: accept {"name":"Ada","age":36}');
  await expect.poll(() => chat.output(), settle).toContain('agent> Hello Ada.');
  expect(toolResultOf(id, 1)).toBe('accept {"name":"Ada","age":36}');
  await expect.poll(() => prompts(chat), settle).toBe(2);

  let asked = count(chat.output(), NAME);
  chat.write('Again.\r');
  await expect.poll(() => count(chat.output(), NAME), settle).toBeGreaterThan(asked);
  chat.write('{"name": "Alan"}\r');
  await expect.poll(() => chat.output(), settle).toContain('agent> Hello Alan.');
  expect(toolResultOf(id, 3)).toBe('accept {"name":"Alan"}');
  await expect.poll(() => prompts(chat), settle).toBe(3);

  asked = count(chat.output(), NAME);
  chat.write('Once more.\r');
  await expect.poll(() => count(chat.output(), NAME), settle).toBeGreaterThan(asked);
  chat.write('/decline\r');
  await expect.poll(() => chat.output(), settle).toContain('answered by tester: decline');
  await expect.poll(() => chat.output(), settle).toContain('agent> As you wish.');
  expect(toolResultOf(id, 5)).toBe('decline');
  expect(chat.output()).not.toContain('Could not answer');

  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('an approval and a question in one round are asked one after the other', async () => {
  const id = book.conversation('both', [
    { toolCalls: [{ name: 'test__set_value', arguments: { key: 'mood', value: 'sunny' } }, askUser.toolCalls[0]!] },
    { content: 'Stored and greeted.' },
  ]);
  const allow = 'Allow test__set_value {"key":"mood","value":"sunny"}? [y/n/a]';
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  chat.write('Store my mood and greet me.\r');
  await expect.poll(() => chat.output(), settle).toContain(allow);
  // The server's question waits behind the open approval question; it is shown, not asked yet.
  await poll(
    () => client.pendingInputs(id),
    (list) => list.length === 1,
  );
  await expect.poll(() => chat.output(), settle).toContain('? test__ask_user asks: Who are you?');
  chat.write('y\r');
  await expect.poll(() => chat.output(), settle).toContain('✓ test__set_value approved by tester');
  await expect.poll(() => chat.output(), settle).toContain(NAME);
  // The first field was asked only once the approval question was answered.
  const shown = chat.output();
  expect(shown.indexOf(NAME)).toBeGreaterThan(shown.indexOf('✓ test__set_value approved by tester'));
  chat.write('Ada\r');
  await expect.poll(() => chat.output(), settle).toContain(AGE);
  // An optional field left empty is left out.
  chat.write('\r');
  await expect.poll(() => chat.output(), settle).toContain('answered by tester: accept {"name":"Ada"}');
  await expect.poll(() => chat.output(), settle).toContain('agent> Stored and greeted.');
  expect(toolResultOf(id, 1)).toBe('accept {"name":"Ada"}');
  expect(chat.output()).not.toMatch(/Could not (answer|decide)/);
  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('URL mode: Opened <url>? [y/n/c]; y accepts', async () => {
  const id = book.conversation('url', [
    {
      toolCalls: [
        {
          name: 'everything__trigger-url-elicitation',
          arguments: { url: 'https://example.com/consent', message: 'Open the consent page.' },
        },
      ],
    },
    { content: 'Thanks for consenting.' },
  ]);
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  chat.write('Ask for consent.\r');
  await expect.poll(() => chat.output(), settle).toContain('    open: https://example.com/consent');
  await expect.poll(() => chat.output(), settle).toContain('Opened https://example.com/consent? [y/n/c]');
  chat.write('maybe\r');
  await expect.poll(() => chat.output(), settle).toContain('Please answer y (opened), n (decline) or c (cancel).');
  chat.write('y\r');
  await expect.poll(() => chat.output(), settle).toContain('answered by tester: accept');
  await expect.poll(() => chat.output(), settle).toContain('agent> Thanks for consenting.');
  expect(toolResultOf(id, 1)).toMatch(/accept/i);
  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('a question answered elsewhere is shown and no longer asked', async () => {
  const id = book.conversation('elsewhere', [askUser, { content: 'Hello Grace.' }]);
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  chat.write('Greet me.\r');
  await expect.poll(() => chat.output(), settle).toContain(NAME);
  const [request] = await poll(
    () => client.pendingInputs(id),
    (list) => list.length === 1,
  );
  await client.answerInput(id, request!.requestId, { action: 'accept', content: { name: 'Grace' }, by: 'ops' });
  await expect.poll(() => chat.output(), settle).toContain(`${request!.requestId} answered by ops: accept`);
  await expect.poll(() => chat.output(), settle).toContain('agent> Hello Grace.');
  await expect.poll(() => prompts(chat), settle).toBe(2);
  const output = chat.output();
  expect(output).not.toContain(AGE);
  expect(output).not.toMatch(/Could not answer|by tester/);
  expect(toolResultOf(id, 1)).toBe('accept {"name":"Grace"}');
  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('chat with piped input does not take its lines as answers: it prints the durable-agent answer command', async () => {
  const id = book.conversation('piped', [askUser, { content: 'Hello Ada.' }, { content: 'Ada what?' }]);
  const chat = spawnTracked(process.execPath, [cliPath, 'chat', '--conversation', id], cliEnv);
  chat.write('Greet me.\nAda\n');
  chat.child.stdin!.end();
  const [request] = await poll(
    () => client.pendingInputs(id),
    (list) => list.length === 1,
  );
  await expect
    .poll(() => chat.output(), settle)
    .toContain(`? answer with: durable-agent answer -c ${id} ${request!.requestId} --accept '{...}'`);
  await client.answerInput(id, request!.requestId, { action: 'accept', content: { name: 'Ada' }, by: 'ops' });
  expect(await chat.exited).toBe(0);
  const output = chat.output();
  expect(output).toContain('? test__ask_user asks: Who are you?');
  expect(output).toContain(`${request!.requestId} answered by ops: accept {"name":"Ada"}`);
  expect(output).toContain('agent> Hello Ada.');
  expect(output).not.toContain(NAME);
  // The second line was a message of its own, answered as one.
  expect(output).toContain('agent> Ada what?');
});
