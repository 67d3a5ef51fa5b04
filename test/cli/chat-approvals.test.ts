import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import type { TestAgent } from '../../src/testing/agent.js';
import { poll, ScriptBook } from '../client/helpers.js';
import type { Crm } from '../helpers/crm-server.js';
import { toolResults } from '../helpers/transcript.js';
import { cliPath, killAll, shellQuote, spawnTracked, type RunningProcess } from './helpers.js';
import { type CliAgent, startCliAgent } from './cli-agent.js';

let crm: Crm;
let agent: TestAgent;
let client: DurableAgentClient;
let cliEnv: NodeJS.ProcessEnv;
let cliAgent: CliAgent | undefined;
const book = new ScriptBook('chat-approvals');

beforeAll(async () => {
  cliAgent = await startCliAgent({ script: book.script, crm: { requireApproval: 'writes' } });
  ({ crm, agent, client, cliEnv } = cliAgent);
});

afterEach(killAll);

afterAll(async () => {
  await cliAgent?.close();
});

/** `durable-agent chat` in a pseudo-terminal (util-linux `script`), deciding as `tester`. */
function chatInTerminal(conversationId: string): RunningProcess {
  const command = [process.execPath, cliPath, 'chat', '--conversation', conversationId, '--by', 'tester']
    .map(shellQuote)
    .join(' ');
  return spawnTracked('script', ['-qfec', command, '/dev/null'], cliEnv);
}

const update = (userId: string, value: string) => ({
  name: 'crm__update_field',
  arguments: { userId, field: 'plan', value },
});
const question = (userId: string, value: string) =>
  `Allow crm__update_field {"userId":"${userId}","field":"plan","value":"${value}"}? [y/n/a]`;
const count = (text: string, part: string) => text.split(part).length - 1;
const prompts = (chat: RunningProcess) => count(chat.output(), 'you> ');
const calls = () => crm.calls.update_field ?? 0;
const settle = { timeout: 60_000, interval: 100 };
const requestsOf = (id: string) => agent.model.requests.filter((entry) => entry.conversation === `conversation-${id}`);

it('chat asks inline: n asks for the reason the model gets, y runs the tool, a allows it for the rest', async () => {
  const id = book.conversation('inline', [
    { toolCalls: [update('u-1', 'gold')] },
    { content: 'Understood, no gold plan.' },
    { toolCalls: [update('u-1', 'pro')] },
    { content: 'Ada is on pro now.' },
    { toolCalls: [update('u-2', 'team')] },
    { toolCalls: [update('u-2', 'basic')] },
    { content: 'Alan went to team, then to basic.' },
  ]);
  const before = calls();
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);

  chat.write('Give Ada the gold plan.\r');
  await expect.poll(() => chat.output(), settle).toContain(question('u-1', 'gold'));
  chat.write('n\r');
  await expect.poll(() => chat.output(), settle).toContain('Why not? (the model gets your reason):');
  chat.write('Gold is not a plan we sell.\r');
  await expect.poll(() => chat.output(), settle).toContain('✗ crm__update_field denied by tester: Gold is not a plan');
  await expect.poll(() => chat.output(), settle).toContain('agent> Understood, no gold plan.');
  await expect.poll(() => prompts(chat), settle).toBe(2);
  expect(calls()).toBe(before);
  expect(toolResults(requestsOf(id)[1]!.messages)[0]!.content).toContain('Gold is not a plan we sell.');

  chat.write('Then pro.\r');
  await expect.poll(() => chat.output(), settle).toContain(question('u-1', 'pro'));
  chat.write('y\r');
  await expect.poll(() => chat.output(), settle).toContain('✓ crm__update_field approved by tester');
  await expect.poll(() => chat.output(), settle).toContain('agent> Ada is on pro now.');
  await expect.poll(() => prompts(chat), settle).toBe(3);
  expect(calls()).toBe(before + 1);
  expect(crm.records.get('u-1')).toMatchObject({ plan: 'pro' });

  chat.write('Move Alan around.\r');
  await expect.poll(() => chat.output(), settle).toContain(question('u-2', 'team'));
  chat.write('a\r');
  await expect.poll(() => chat.output(), settle).toContain('agent> Alan went to team, then to basic.');
  const output = chat.output();
  expect(output).toContain('✓ crm__update_field approved by tester (and for the rest of the conversation)');
  // The second call of the tool was not asked about.
  expect(output).not.toContain(question('u-2', 'basic'));
  expect(calls()).toBe(before + 3);
  await expect.poll(() => prompts(chat), settle).toBe(4);

  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('chat shows calls decided elsewhere and does not ask about them (again)', async () => {
  // Two calls in one round: the chat asks about the first; the second waits behind it.
  const id = book.conversation('elsewhere', [
    { toolCalls: [update('u-1', 'team'), update('u-2', 'team')] },
    { content: 'Ada is on team; Alan stays.' },
  ]);
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  chat.write('Put Ada and Alan on the team plan.\r');
  await expect.poll(() => chat.output(), settle).toContain(question('u-1', 'team'));
  const pending = await poll(
    () => client.pendingApprovals(id),
    (list) => list.length === 2,
  );
  const [first, second] = pending.sort((a, b) => (a.arguments.userId! < b.arguments.userId! ? -1 : 1));

  // Decided in another terminal while the chat asks about the other call: never asked about.
  await client.deny(id, second!.callId, { reason: 'Alan keeps his plan.', by: 'ops' });
  await expect.poll(() => chat.output(), settle).toContain('✗ crm__update_field denied by ops: Alan keeps his plan.');
  // The question about the first call is still open; deciding it elsewhere closes it.
  await client.approve(id, first!.callId, { by: 'ops' });
  await expect.poll(() => chat.output(), settle).toContain('✓ crm__update_field approved by ops');
  await expect.poll(() => chat.output(), settle).toContain('agent> Ada is on team; Alan stays.');
  await expect.poll(() => prompts(chat), settle).toBeGreaterThanOrEqual(2);

  const output = chat.output();
  // The call decided elsewhere was never asked about; nothing was typed, so nothing was decided here.
  expect(count(output, question('u-2', 'team'))).toBe(0);
  expect(output).not.toMatch(/Could not decide|by tester/);
  expect(crm.records.get('u-1')).toMatchObject({ plan: 'team' });
  expect(toolResults(requestsOf(id)[1]!.messages).map((result) => result.content)).toEqual([
    expect.any(String),
    expect.stringContaining('Alan keeps his plan.'),
  ]);

  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('chat opened on a conversation that already waits asks at once; the answer finishes the turn', async () => {
  const id = book.conversation('join', [{ toolCalls: [update('u-2', 'pro')] }, { content: 'Alan is on pro.' }]);
  await client.send(id, 'Put Alan on pro.');
  await poll(
    () => client.pendingApprovals(id),
    (list) => list.length === 1,
  );
  const chat = chatInTerminal(id);
  await expect.poll(() => chat.output(), settle).toContain(question('u-2', 'pro'));
  expect(chat.output()).toContain(`Conversation ${id} (1 turns, awaiting_approval)`);
  chat.write('y\r');
  await expect.poll(() => chat.output(), settle).toContain('✓ crm__update_field approved by tester');
  await expect.poll(() => chat.output(), settle).toContain('agent> Alan is on pro.');
  await expect.poll(() => prompts(chat), settle).toBeGreaterThanOrEqual(1);
  expect(crm.records.get('u-2')).toMatchObject({ plan: 'pro' });
  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('chat: Ctrl-C while asking interrupts the turn; the call is cancelled, not run', async () => {
  const id = book.conversation('interrupt', [{ toolCalls: [update('u-1', 'free')] }]);
  const before = calls();
  const chat = chatInTerminal(id);
  await expect.poll(() => prompts(chat), settle).toBe(1);
  chat.write('Make Ada free.\r');
  await expect.poll(() => chat.output(), settle).toContain(question('u-1', 'free'));
  chat.write('\x03');
  await expect.poll(() => chat.output(), settle).toContain('✗ crm__update_field cancelled: the turn was interrupted');
  await expect.poll(() => chat.output(), settle).toContain('(The turn was interrupted.)');
  await expect.poll(() => prompts(chat), settle).toBe(2);
  expect(chat.output()).not.toMatch(/Could not decide/);
  expect(calls()).toBe(before);
  expect((await client.status(id)).lastResult).toMatchObject({ stopReason: 'cancelled' });
  chat.write('\x04');
  expect(await chat.exited).toBe(0);
});

it('chat with piped input does not take its lines as answers: it says how to decide elsewhere', async () => {
  const id = book.conversation('piped', [
    { toolCalls: [update('u-1', 'team')] },
    { content: 'Approved elsewhere.' },
    { content: 'Yes to what?' },
  ]);
  const chat = spawnTracked(process.execPath, [cliPath, 'chat', '--conversation', id], cliEnv);
  chat.write('Put Ada on team.\ny\n');
  chat.child.stdin!.end();
  const [pending] = await poll(
    () => client.pendingApprovals(id),
    (list) => list.length === 1,
  );
  await expect
    .poll(() => chat.output(), settle)
    .toContain(`? crm__update_field waits for approval: durable-agent approve -c ${id} ${pending!.callId}`);
  await client.approve(id, pending!.callId, { by: 'ops' });
  expect(await chat.exited).toBe(0);
  const output = chat.output();
  expect(output).toContain('✓ crm__update_field approved by ops');
  expect(output).toContain('agent> Approved elsewhere.');
  // The second line was a message of its own, answered as one.
  expect(output).not.toContain('[y/n/a]');
  expect(output).toContain('agent> Yes to what?');
  expect(requestsOf(id).at(-1)!.messages.at(-1)).toMatchObject({ role: 'user', content: 'y' });
});
