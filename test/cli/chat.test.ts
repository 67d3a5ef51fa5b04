import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { runChatSession } from '../../src/cli/chat/session.js';
import { DurableAgentClient } from '../../src/client/index.js';
import type { TestAgent } from '../../src/testing/agent.js';
import { ScriptBook } from '../client/helpers.js';
import { cliPath, killAll, shellQuote, spawnTracked, type RunningProcess } from './helpers.js';
import { type CliAgent, startCliAgent } from './cli-agent.js';

let agent: TestAgent;
let client: DurableAgentClient;
let cliEnv: NodeJS.ProcessEnv;
let cliAgent: CliAgent | undefined;
const book = new ScriptBook('chat');

beforeAll(async () => {
  cliAgent = await startCliAgent({ script: book.script });
  ({ agent, client, cliEnv } = cliAgent);
});

afterEach(killAll);

afterAll(async () => {
  await cliAgent?.close();
});

/** `durable-agent chat` in a pseudo-terminal (util-linux `script`), so readline, raw mode and Ctrl-C are real. */
function chatInTerminal(conversationId: string): RunningProcess {
  const command = [process.execPath, cliPath, 'chat', '--conversation', conversationId].map(shellQuote).join(' ');
  return spawnTracked('script', ['-qfec', command, '/dev/null'], cliEnv);
}

const prompts = (chat: RunningProcess) => chat.output().split('you> ').length - 1;
const settle = { timeout: 60_000, interval: 100 };

it('chat: shows the tool calls and the answer; Ctrl-C interrupts a hanging tool, Ctrl-C at the prompt leaves', async () => {
  const id = book.conversation('session', [
    { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
    { toolCalls: [{ name: 'crm__get_company', arguments: { companyId: 'c-9' } }] },
    { content: 'Ada works at Analytical Engines Ltd in London.' },
    { toolCalls: [{ name: 'crm__hang', arguments: {} }] },
  ]);
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  expect(chat.output()).toContain(`New conversation ${id}`);

  chat.write('Where does Ada work?\r');
  await expect.poll(() => chat.output(), settle).toContain('agent> Ada works at Analytical Engines Ltd in London.');
  const output = chat.output();
  expect(output).toContain('→ crm__find_user {"name":"Ada"}');
  expect(output).toMatch(/✓ crm__find_user/);
  expect(output).toContain('→ crm__get_company {"companyId":"c-9"}');
  expect(output).toMatch(/✓ crm__get_company/);
  // Tool lines come in the order the calls were made, before the answer.
  const order = ['→ crm__find_user', '✓ crm__find_user', '→ crm__get_company', '✓ crm__get_company', 'agent> Ada'];
  const positions = order.map((text) => output.indexOf(text));
  expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  await expect.poll(() => prompts(chat), settle).toBe(2);

  chat.write('Do the slow thing.\r');
  await expect.poll(() => chat.output(), settle).toContain('→ crm__hang');
  chat.write('\x03');
  await expect.poll(() => chat.output(), settle).toContain('Interrupting the turn');
  await expect.poll(() => chat.output(), settle).toContain('(The turn was interrupted.)');
  expect(chat.output()).toMatch(/✗ crm__hang.* cancelled/);
  await expect.poll(() => prompts(chat), settle).toBe(3);

  chat.write('\x03');
  expect(await chat.exited).toBe(0);

  const status = await client.status(id);
  expect(status).toMatchObject({ turns: 2, phase: 'idle', lastResult: { stopReason: 'cancelled' } });
  const transcript = await client.fullTranscript(id);
  expect(transcript.at(-1)?.content).toMatch(/interrupted this turn/);
});

it('chat --conversation resumes an existing conversation; Ctrl-D leaves', async () => {
  const id = book.conversation('resume', [{ content: 'First.' }, { content: 'Second, with memory.' }]);
  await client.ask(id, 'one');
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  expect(chat.output()).toContain(`Conversation ${id} (1 turns, idle)`);
  chat.write('two\r');
  await expect.poll(() => chat.output(), settle).toContain('agent> Second, with memory.');
  await expect.poll(() => prompts(chat), settle).toBe(2);
  chat.write('\x04');
  expect(await chat.exited).toBe(0);
  const request = agent.model.requests.filter((entry) => entry.conversation === `conversation-${id}`).at(-1)!;
  expect(request.messages.map((message) => message.content)).toEqual(['one', 'First.', 'two']);
});

it('chat with piped input answers each line in order, then leaves at the end of input', async () => {
  const id = book.conversation('piped', [
    { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Alan' } }] },
    { content: 'Alan is u-2.' },
    { content: 'You are welcome.' },
  ]);
  const chat = spawnTracked(process.execPath, [cliPath, 'chat', '--conversation', id], cliEnv);
  chat.write('Who is Alan?\nThanks!\n');
  chat.child.stdin!.end();
  expect(await chat.exited).toBe(0);
  const output = chat.output();
  expect(output).toContain('→ crm__find_user {"name":"Alan"}');
  expect(output.indexOf('agent> Alan is u-2.')).toBeLessThan(output.indexOf('agent> You are welcome.'));
  // No spinner without a terminal.
  expect(output).not.toMatch(/thinking…/);
});

it('chat prints the answer as it is written (streaming), once, with no text repeated', async () => {
  const answer = 'Streaming shows each word of this answer as soon as the model writes it.';
  const id = book.conversation('streaming', [{ content: answer, chunkDelayMs: 300 }]);
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  chat.write('Stream something.\r');
  // Caught in the middle: the first words are on screen while the rest is still being written.
  await expect
    .poll(() => {
      const output = chat.output();
      return output.includes('agent> Streaming shows') && !output.includes(answer);
    }, settle)
    .toBe(true);
  await expect.poll(() => chat.output(), settle).toContain(`agent> ${answer}`);
  await expect.poll(() => prompts(chat), settle).toBe(2);
  expect(chat.output().split('Streaming shows').length - 1).toBe(1);
  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('chat writes the live text to the output it was given, not to process.stdout', async () => {
  const answer = 'Every streamed word of this answer goes to the output the session was given.';
  const id = book.conversation('own-output', [{ content: answer, chunkDelayMs: 100 }]);
  const input = new PassThrough();
  const output = new PassThrough();
  const written: string[] = [];
  output.on('data', (chunk: Buffer) => written.push(chunk.toString()));
  const stdout = vi.spyOn(process.stdout, 'write');
  try {
    const session = runChatSession({
      client,
      conversationId: id,
      settings: undefined,
      input: input as unknown as NodeJS.ReadStream,
      output: output as unknown as NodeJS.WriteStream,
    });
    input.end('Stream something.\n');
    await session;
  } finally {
    stdout.mockRestore();
  }
  const text = written.join('');
  expect(text).toContain(`agent> ${answer}`);
  expect(text.split('Every streamed word').length - 1).toBe(1);
  // Printed as it was written: pieces of the answer, not the finished answer in one line.
  expect(written.some((chunk) => chunk !== '' && chunk !== answer && answer.startsWith(chunk))).toBe(true);
  const toStdout = stdout.mock.calls.map(([chunk]) => String(chunk)).join('');
  expect(toStdout).not.toContain('Every streamed');
  expect(toStdout).not.toContain('agent>');
});

/** `durable-agent chat` with `lines` piped in, to the end; stdout and stderr apart. */
async function pipedChat(conversationId: string, lines: string[], settings?: object) {
  const args = [cliPath, 'chat', '--conversation', conversationId];
  if (settings) args.push('--settings', JSON.stringify(settings));
  const chat = spawnTracked(process.execPath, args, cliEnv);
  let stdout = '';
  let stderr = '';
  chat.child.stdout!.on('data', (chunk: string) => (stdout += chunk));
  chat.child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  chat.write(lines.map((line) => `${line}\n`).join(''));
  chat.child.stdin!.end();
  const code = await chat.exited;
  return { code, stdout, stderr };
}

it('chat across continue-as-new (maxTurnsPerRun 1): every answer whole and in order, exit 0, nothing on stderr', async () => {
  // Each answer comes in one burst, so the chat's poll for more reaches the run while it continues as new: Temporal
  // refuses it ("workflow is closing"), which once held the stream for 40 s, cut the answer short, and crashed the
  // exit ("Channel has been shut down").
  const sessions = Array.from({ length: 4 }, (_, session) => {
    const answers = Array.from({ length: 4 }, (_, turn) => `Session ${session} answer ${turn + 1}, whole to its end.`);
    const id = book.conversation(
      `rollover-${session}`,
      answers.map((content) => ({ content, delayMs: 200 })),
    );
    return { id, answers };
  });
  const runs = await Promise.all(
    sessions.map(({ id, answers }) =>
      pipedChat(
        id,
        answers.map((_, turn) => `question ${turn + 1}`),
        { maxTurnsPerRun: 1 },
      ),
    ),
  );
  for (const [index, run] of runs.entries()) {
    const { answers } = sessions[index]!;
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const positions = answers.map((answer) => run.stdout.indexOf(`agent> ${answer}\n`));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    // Each answer printed once.
    for (const answer of answers) expect(run.stdout.split(answer).length - 1).toBe(1);
  }
  for (const { id } of sessions) expect((await client.status(id)).turns).toBe(4);
});

it('chat: a rejected message is an error on stderr; the session goes on, and exits 2 at the end of input', async () => {
  const id = book.conversation('rejected', [{ content: 'First answer.' }, { content: 'Third answer.' }]);
  const run = await pipedChat(id, ['first', 'this message is longer than the limit allows', 'third'], {
    maxMessageChars: 20,
  });
  expect(run.code).toBe(2);
  expect(run.stderr).toMatch(/^Error: .*(too long|longer|20)/m);
  expect(run.stdout).not.toMatch(/Error/);
  expect(run.stdout.indexOf('agent> First answer.')).toBeLessThan(run.stdout.indexOf('agent> Third answer.'));
  expect(run.stdout).toContain('agent> Third answer.');
});

it('chat shows a turn sent from elsewhere while it waits at the prompt, as it streams', async () => {
  const answer = 'This answer was asked for from another terminal, and the chat shows it as it is written.';
  const id = book.conversation('elsewhere', [
    { content: 'Hello from the chat.' },
    { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
    { content: answer, chunkDelayMs: 100 },
  ]);
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  chat.write('hello\r');
  await expect.poll(() => chat.output(), settle).toContain('agent> Hello from the chat.');
  await expect.poll(() => prompts(chat), settle).toBe(2);

  await client.send(id, 'Who is Ada? (sent from elsewhere)');
  await expect.poll(() => chat.output(), settle).toContain('you (elsewhere)> Who is Ada? (sent from elsewhere)');
  // Streamed: the start of the answer is on screen before its end.
  await expect
    .poll(() => {
      const output = chat.output();
      return output.includes('agent> This answer was asked') && !output.includes(answer);
    }, settle)
    .toBe(true);
  await expect.poll(() => chat.output(), settle).toContain(`agent> ${answer}`);
  const output = chat.output();
  expect(output).toContain('→ crm__find_user {"name":"Ada"}');
  expect(output.indexOf('you (elsewhere)>')).toBeLessThan(output.indexOf('→ crm__find_user'));
  expect(output.split('This answer was asked').length - 1).toBe(1);
  // Back at the prompt afterwards.
  await expect.poll(() => prompts(chat), settle).toBe(3);
  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});
