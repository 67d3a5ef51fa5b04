import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { DurableAgentClient } from '../../src/client/index.js';
import type { ChatMessage, CostSpend } from '../../src/shared/types.js';
import type { TestAgent } from '../../src/testing/agent.js';
import type { TurnResult } from '../../src/workflows/definitions.js';
import { poll, ScriptBook } from '../client/helpers.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { killAll, runCli } from './helpers.js';
import { type CliAgent, startCliAgent } from './cli-agent.js';

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let client: DurableAgentClient;
let cliEnv: NodeJS.ProcessEnv;
let cliAgent: CliAgent | undefined;
let directory: string;
const book = new ScriptBook('cli');

beforeAll(async () => {
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-cli-test-'));
  cliAgent = await startCliAgent({ script: book.script });
  ({ env, agent, client, cliEnv } = cliAgent);
});

afterEach(killAll);

afterAll(async () => {
  await cliAgent?.close();
  if (directory) await fs.rm(directory, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(args, cliEnv);

describe('durable-agent CLI', () => {
  it('--help lists every command; each command has --help with its options', async () => {
    const help = await cli('--help');
    expect(help.code).toBe(ExitCode.Ok);
    const names = ['dev', 'worker', 'start', 'send', 'ask', 'chat', 'history', 'list', 'interrupt', 'end'];
    for (const name of [...names, 'approvals', 'approve', 'deny']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    }
    expect(help.stdout).toMatch(/scripted-model/);
    for (const name of [
      'start',
      'send',
      'ask',
      'history',
      'list',
      'interrupt',
      'end',
      'approvals',
      'approve',
      'deny',
    ]) {
      const commandHelp = await cli(name, '--help');
      expect(commandHelp.code, name).toBe(ExitCode.Ok);
      expect(commandHelp.stdout, name).toMatch(/--json/);
    }
    expect((await cli('chat', '--help')).stdout).toMatch(/--conversation <id>/);
    expect((await cli('dev', '--help')).stdout).toMatch(/TEMPORAL_ADDRESS/);
  });

  it('usage errors exit with ExitCode.Usage', async () => {
    expect((await cli('history')).code).toBe(ExitCode.Usage); // --conversation is required
    expect((await cli('ask', '--no-such-option', 'hi')).code).toBe(ExitCode.Usage);
    expect((await cli('no-such-command')).code).toBe(ExitCode.Usage);
    const empty = await cli('ask', '--conversation', book.conversation('empty'), '   ');
    expect(empty.code).toBe(ExitCode.Usage);
    expect(empty.stderr).toMatch(/rejected the message: A message needs "content"/);
  });

  it('ask prints the answer after two tool calls; --json prints the TurnResult', async () => {
    const id = book.conversation('ask', [
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { toolCalls: [{ name: 'crm__get_company', arguments: { companyId: 'c-9' } }] },
      { content: 'Ada works in London.' },
      { content: 'Still London.' },
    ]);
    const plain = await cli('ask', '--conversation', id, 'Where does Ada work?');
    expect(plain).toMatchObject({ code: ExitCode.Ok, stdout: 'Ada works in London.\n' });

    const json = await cli('ask', '--conversation', id, '--json', 'And now?');
    expect(json.code).toBe(ExitCode.Ok);
    const result = JSON.parse(json.stdout) as TurnResult;
    expect(result).toMatchObject({ conversationId: id, turn: 2, answer: 'Still London.', stopReason: 'completed' });
  });

  it('ask --output-schema asks for structured output: plain prints the parsed JSON, --json the result with output', async () => {
    const id = book.conversation('structured', [{ content: '{"city": "London"}' }, { content: '{"city": "Paris"}' }]);
    const schema = JSON.stringify({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    const plain = await cli('ask', '-c', id, '--output-schema', schema, 'Where does Ada work?');
    expect(plain).toMatchObject({ code: ExitCode.Ok, stdout: '{\n  "city": "London"\n}\n' });

    const json = await cli('ask', '-c', id, '--output-schema', schema, '--json', 'And now?');
    expect(JSON.parse(json.stdout)).toMatchObject({ answer: '{"city": "Paris"}', output: { city: 'Paris' } });
    expect(agent.model.requests.at(-1)!.options).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: JSON.parse(schema) as object } },
    });

    const bad = await cli('ask', '-c', id, '--output-schema', '{"type": ', 'Hi');
    expect(bad.code).toBe(ExitCode.Usage);
    expect(bad.stderr).toContain('the schema is not JSON');
  });

  it('a budget stop that still answered exits 0; a turn without an answer exits with ExitCode.TurnFailed', async () => {
    const budget = book.conversation('budget', [
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { content: 'Best I can say: Ada exists.' },
    ]);
    const stopped = await cli('ask', '-c', budget, '--settings', '{"budget": {"maxRounds": 1}}', 'Who is Ada?');
    expect(stopped.code).toBe(ExitCode.Ok);
    expect(stopped.stdout).toBe('Best I can say: Ada exists.\n');
    expect(stopped.stderr).toMatch(/ran out of its rounds budget; this is its final answer/);

    const failing = book.conversation('failing', [{ error: { status: 400 } }]);
    const failed = await cli('ask', '-c', failing, '--json', 'Hello?');
    expect(failed.code).toBe(ExitCode.TurnFailed);
    expect(JSON.parse(failed.stdout)).toMatchObject({ answer: null, stopReason: 'error:ModelBadRequest' });
  });

  it('send creates the conversation, a second send appends, history --json reads the whole transcript', async () => {
    const id = book.conversation('send', [{ content: 'Hello!' }, { content: 'Bye!' }]);
    const first = await cli('send', '--conversation', id, '--json', 'hi');
    expect(first.code).toBe(ExitCode.Ok);
    expect(JSON.parse(first.stdout)).toMatchObject({ conversationId: id, created: true });
    const second = await cli('send', '--conversation', id, 'bye');
    expect(second).toMatchObject({ code: ExitCode.Ok });
    expect(second.stdout).toMatch(new RegExp(`^Queued message \\S+ in conversation ${id}\\.`));

    const history = await poll(
      async () => {
        const run = await cli('history', '--conversation', id, '--json');
        return JSON.parse(run.stdout) as { messages: ChatMessage[]; cost?: CostSpend };
      },
      (read) => read.messages.length === 4,
      { attempts: 60, intervalMs: 500 },
    );
    // The test worker has no price for the scripted model: both calls are counted, as unpriced.
    expect(history.cost).toEqual({ usd: 0, unpricedCalls: 2 });
    expect(history.messages.map((message) => `${message.role}: ${message.content}`)).toEqual([
      'user: hi',
      'assistant: Hello!',
      'user: bye',
      'assistant: Bye!',
    ]);
    const plain = await cli('history', '--conversation', id);
    expect(plain.stdout).toBe('[0] user: hi\n[1] assistant: Hello!\n[2] user: bye\n[3] assistant: Bye!\n');
  });

  it('list --status filters by state; interrupt and end change it', async () => {
    const running = book.conversation('list-running', [{ toolCalls: [{ name: 'crm__hang', arguments: {} }] }]);
    const idle = book.conversation('list-idle', [{ content: 'done' }]);
    expect((await cli('ask', '-c', idle, 'hi')).code).toBe(ExitCode.Ok);
    expect((await cli('send', '-c', running, 'hang')).code).toBe(ExitCode.Ok);
    const ours = `DurableAgentConversationId IN ('${running}', '${idle}')`;
    const listed = async (...args: string[]) => {
      const run = await cli('list', '--json', '--query', ours, ...args);
      expect(run.code).toBe(ExitCode.Ok);
      return (JSON.parse(run.stdout) as { conversationId: string }[]).map((entry) => entry.conversationId);
    };
    await poll(
      () => listed('--status', 'running'),
      (ids) => ids.join() === running,
    );
    await poll(
      () => listed('--status', 'idle'),
      (ids) => ids.join() === idle,
    );
    const table = await cli('list', '--query', ours);
    expect(table.stdout).toMatch(/^CONVERSATION\s+STATUS\s+TURNS/);
    expect(table.stdout).toContain(running);

    const interrupted = await cli('interrupt', '-c', running, '--json');
    expect(JSON.parse(interrupted.stdout)).toEqual({ conversationId: running, interrupted: true });
    await poll(
      () => client.status(running),
      (status) => status.lastResult?.stopReason === 'cancelled',
    );
    expect((await cli('end', '-c', running)).code).toBe(ExitCode.Ok);
    await poll(
      () => listed('--status', 'ended'),
      (ids) => ids.join() === running,
    );
  });

  it('ask and send take a message over 128 KiB from a pipe, from `-` and from --file', async () => {
    // 70,000 three-byte characters: over 200 KiB of UTF-8, more than one argument may hold (128 KiB), yet within the
    // conversation's default maxMessageChars (100,000 characters).
    const long = (label: string) => `${label}: ${'€'.repeat(70_000)}`;
    expect(Buffer.byteLength(long('piped'))).toBeGreaterThan(200 * 1024);
    const id = book.conversation('stdin', [{ content: 'Piped.' }, { content: 'Dashed.' }, { content: 'Filed.' }]);
    const userMessages = () =>
      agent.model
        .requestsFor(conversationWorkflowId(id))
        .map((request) => request.messages.filter((message) => message.role === 'user').at(-1)?.content);

    // No message argument, stdin a pipe: the message is read from stdin (its final newline dropped).
    const piped = await runCli(['ask', '-c', id], cliEnv, { input: `${long('piped')}\n` });
    expect(piped).toMatchObject({ code: ExitCode.Ok, stdout: 'Piped.\n' });
    const dashed = await runCli(['ask', '-c', id, '-'], cliEnv, { input: long('dashed') });
    expect(dashed).toMatchObject({ code: ExitCode.Ok, stdout: 'Dashed.\n' });
    const file = path.join(directory, 'message.txt');
    await fs.writeFile(file, `${long('filed')}\n`);
    const sent = await cli('send', '-c', id, '--file', file);
    expect(sent.code).toBe(ExitCode.Ok);
    await poll(
      () => client.status(id),
      (status) => status.turns === 3 && status.phase === 'idle',
    );
    // What reached the model: each message whole.
    expect(userMessages()).toEqual([long('piped'), long('dashed'), long('filed')]);

    const both = await cli('send', '-c', id, '--file', file, 'and an argument');
    expect(both.code).toBe(ExitCode.Usage);
    expect(both.stderr).toMatch(/as an argument or with --file, not both/);
    const missingFile = await cli('send', '-c', id, '--file', path.join(directory, 'no-such-file.txt'));
    expect(missingFile.code).toBe(ExitCode.Usage);
    expect(missingFile.stderr).toMatch(/Cannot read the message file .*no-such-file\.txt \(--file\): ENOENT/);
    const empty = await runCli(['send', '-c', id], cliEnv, { input: '\n' });
    expect(empty.code).toBe(ExitCode.Usage);
    expect(empty.stderr).toMatch(/No message: stdin is empty/);
    for (const run of [both, missingFile, empty]) expect(run.stderr).not.toMatch(/\n\s+at /);
    expect((await cli('ask', '--help')).stdout).toMatch(/--file <path>[\s\S]*about\s+128 KiB/);
  });

  it('interrupt and end say what happened: no running turn, already ended (exit 4 for interrupt)', async () => {
    const id = book.conversation('interrupt-idle', [{ content: 'ok' }]);
    expect((await cli('ask', '-c', id, 'hi')).code).toBe(ExitCode.Ok);
    const idle = await cli('interrupt', '-c', id);
    expect(idle).toMatchObject({
      code: ExitCode.Ok,
      stdout: `Conversation ${id} has no running turn; nothing to interrupt.\n`,
    });
    const idleJson = await cli('interrupt', '-c', id, '--json');
    expect(JSON.parse(idleJson.stdout)).toEqual({ conversationId: id, interrupted: false });

    expect(await cli('end', '-c', id)).toMatchObject({ code: ExitCode.Ok, stdout: `Conversation ${id} has ended.\n` });
    await poll(
      () => client.status(id),
      (status) => !status.open,
    );
    const interruptEnded = await cli('interrupt', '-c', id);
    expect(interruptEnded).toMatchObject({ code: ExitCode.Ended, stdout: '' });
    expect(interruptEnded.stderr).toMatch(new RegExp(`^durable-agent: Conversation ${id} has ended\\.`));
    const endAgain = await cli('end', '-c', id);
    expect(endAgain).toMatchObject({
      code: ExitCode.Ok,
      stdout: `Conversation ${id} had already ended; nothing changed.\n`,
    });
    const endAgainJson = await cli('end', '-c', id, '--json');
    expect(JSON.parse(endAgainJson.stdout)).toEqual({ conversationId: id, ended: true, alreadyEnded: true });
    expect(interruptEnded.stderr).not.toMatch(/\n\s+at /);
  });

  // Each CLI call is a process of its own: the cases are split so that each test stays well within its time limit.
  it('interrupt and end of a run that was terminated, closed idle, or never existed (exit 4, 0, 3)', async () => {
    // A terminated run takes no signal either; it is reported without querying the closed run.
    const terminated = book.conversation('interrupt-terminated', [{ content: 'ok' }]);
    expect((await cli('send', '-c', terminated, 'hi')).code).toBe(ExitCode.Ok);
    await env.client.workflow.getHandle(conversationWorkflowId(terminated)).terminate('test');
    const interruptTerminated = await cli('interrupt', '-c', terminated);
    expect(interruptTerminated.code).toBe(ExitCode.Ended);
    expect(interruptTerminated.stderr).toMatch(/has ended: its workflow run terminated/);
    expect((await cli('end', '-c', terminated)).stdout).toMatch(/had already ended \(its workflow run terminated\)/);

    // A run closed by its idle timeout has no turn to interrupt; the conversation is not ended.
    const closedIdle = book.conversation('interrupt-closed-idle', [{ content: 'ok' }]);
    expect((await cli('ask', '-c', closedIdle, '--idle-timeout', '0.5', 'hi')).code).toBe(ExitCode.Ok);
    await poll(
      () => client.status(closedIdle),
      (status) => !status.open,
    );
    expect(await cli('interrupt', '-c', closedIdle)).toMatchObject({
      code: ExitCode.Ok,
      stdout: `Conversation ${closedIdle} has no running turn; nothing to interrupt.\n`,
    });

    const missing = book.conversation('interrupt-missing');
    for (const command of ['interrupt', 'end']) {
      const run = await cli(command, '-c', missing);
      expect(run.code, command).toBe(ExitCode.NotFound);
      expect(run.stderr, command).toMatch(/does not exist/);
      expect(run.stdout, command).toBe('');
    }
    expect(interruptTerminated.stderr).not.toMatch(/\n\s+at /);
  });

  it('exit codes: a missing conversation is NotFound, an ended one is Ended, an unreachable cluster is Unavailable', async () => {
    const missing = await cli('history', '--conversation', book.conversation('missing'));
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(missing.stderr).toMatch(/does not exist/);

    const id = book.conversation('ended', [{ content: 'ok' }]);
    expect((await cli('ask', '-c', id, 'hi')).code).toBe(ExitCode.Ok);
    expect((await cli('end', '-c', id)).code).toBe(ExitCode.Ok);
    await poll(
      () => client.status(id),
      (status) => !status.open,
    );
    const ended = await cli('send', '-c', id, 'hello again');
    expect(ended.code).toBe(ExitCode.Ended);
    expect(ended.stderr).toMatch(/has ended/);

    // Port 1: privileged, so no test server listens there.
    const unreachable = await runCli(['list'], { ...cliEnv, TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expect(unreachable.code).toBe(ExitCode.Unavailable);
    expect(unreachable.stderr).toMatch(/Cannot reach Temporal at 127\.0\.0\.1:1/);
  });
});
