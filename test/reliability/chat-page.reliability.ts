import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import type { HttpServerConfig } from '../../src/worker/mcp/config.js';
import { findFreePort } from '../../src/temporal-servers/ports.js';
import { createServeToken } from '../../src/bridge/serve-tokens.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { killAll } from '../cli/helpers.js';
import { Browser } from './browser.js';
import { occurrences, save, startServeProcess, stopServe, view } from './chat-page-view.js';
import { killLeftovers, requireBuild, ResultRows, until } from './helpers.js';

/**
 * Issue 18, item 4: the chat page of `durable-agent serve` (the built CLI, as users run it) in headless Chromium, on a
 * Temporal dev server, a worker with the scripted model and the MCP test server. A person types a message and sees
 * the answer stream in, a tool call start and finish, a retried model call whose text replaces the first attempt's,
 * and the answer of a turn that goes on while `serve` is restarted on the same port: the browser reconnects with
 * `Last-Event-ID` and nothing is shown twice. Screenshots go to test-results/screenshots (then docs/screenshots).
 */

const CONVERSATION = 'chat-page-demo';
/** The secret `serve` signs scoped tokens with, in the approvals test. */
const SECRET = 'chat-page-test-secret-of-at-least-32-bytes';
/** Markup in what the model writes and what a person types is shown as text, never parsed. */
const FIRST_ANSWER = 'The tool echoed "hello from the page" back, <em>word for word</em>, so the round trip works.';
const SECOND_MESSAGE = 'Why does it <b>keep going</b>? <img src="x">';
const LONG_ANSWER =
  'Durable agents keep going when parts of the system restart: the turn runs in a workflow, every model call and ' +
  'every tool call is an activity, and the page picks the stream up again where it stopped.';

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;
let agent: TestAgent;
/** A worker of its own (its own task queue and script) for the approvals. */
let approvalAgent: TestAgent;
let browser: Browser | undefined;
let port: number;
const rows = new ResultRows('chat-page');

beforeAll(async () => {
  requireBuild();
  env = await createLocalEnvironment();
  mcp = await startTestMcpServer({ transport: 'http' });
  const server: HttpServerConfig = {
    name: 'test',
    transport: 'http',
    url: mcp.url,
    headers: {},
    allowTools: undefined,
    denyTools: [],
    timeoutMs: 60_000,
    disabled: false,
  };
  agent = await startTestAgent({
    env,
    mcpServers: [server],
    script: [
      // Turn 1: a sentence and a tool call, then an answer whose first attempt drops after three chunks.
      {
        content: 'Let me echo that.',
        toolCalls: [{ name: 'test__echo', arguments: { text: 'hello from the page' } }],
        chunkDelayMs: 60,
      },
      { content: FIRST_ANSWER, chunkDelayMs: 150, failAfterChunks: 3 },
      { content: FIRST_ANSWER, chunkDelayMs: 40 },
      // Turn 2: a slow answer, during which `serve` is restarted.
      { content: LONG_ANSWER, chunkDelayMs: 200 },
    ],
  });
  approvalAgent = await startTestAgent({
    env,
    // The test server's writes wait for a person.
    mcpServers: [{ ...server, requireApproval: ['set_value'] }],
    script: [
      // Turn 1: approved.
      {
        content: 'I will store it.',
        toolCalls: [{ name: 'test__set_value', arguments: { key: 'colour', value: 'green' } }],
      },
      { content: 'Stored: colour = green.' },
      // Turn 2: denied, with a reason the model reads.
      { toolCalls: [{ name: 'test__set_value', arguments: { key: 'colour', value: 'red' } }] },
      { content: 'Understood: I left the colour as it was.' },
    ],
  });
  port = await findFreePort();
  // Tall enough for every screenshot: the composer is fixed to the bottom of the view.
  browser = await Browser.launch({ width: 1100, height: 1300 });
});

afterAll(async () => {
  rows.write();
  await browser?.close();
  await killAll();
  await agent?.close();
  await approvalAgent?.close();
  await mcp?.close();
  await env?.teardown();
  killLeftovers();
});

/** `durable-agent serve` on the test's port for a worker's task queue. */
function startServe(taskQueue = agent.taskQueue, environment: Record<string, string> = {}) {
  return startServeProcess({ port, address: env.address, taskQueue, environment });
}

describe('the chat page of durable-agent serve in a real browser', () => {
  it('chat page: a typed message, the streamed answer, a tool call, a retried model call, and a restart of serve', async () => {
    let served = await startServe();
    const page = await browser!.newPage();
    await page.goto(`${served.url}/#conversation=${CONVERSATION}`);
    await until(async () => (await view(page)).status.state === 'connected', 'the page to connect');

    // Turn 1: typed and sent with Enter.
    await page.type('#message', 'Echo "hello from the page", please.');
    await page.pressEnter();
    const tool = await until(async () => (await view(page)).turns[0]?.tools[0], 'the tool call on the page');
    expect(tool.name).toBe('test__echo');
    expect(tool.arguments).toContain('"text": "hello from the page"');
    const turn1 = await until(async () => {
      const turn = (await view(page)).turns[0];
      return turn?.end === 'completed' && turn;
    }, 'the first answer');
    expect(turn1.user).toBe('Echo "hello from the page", please.');
    expect(turn1.tools).toEqual([
      expect.objectContaining({ name: 'test__echo', preview: 'hello from the page', classes: 'tool-call ok' }),
    ]);
    expect(turn1.tools[0]!.state).toMatch(/^ok · \d+ ms$/);
    // Round 2 was retried: its first attempt's three chunks were replaced, not kept in front of the answer.
    expect(turn1.rounds).toEqual([
      { round: 1, attempt: 1, text: 'Let me echo that.' },
      { round: 2, attempt: 2, text: FIRST_ANSWER },
    ]);
    const text1 = await page.text();
    expect(occurrences(text1, FIRST_ANSWER)).toBe(1);
    expect(occurrences(text1, 'The tool echoed')).toBe(1);
    const answerShot = await save('chat-page.png', page);

    // Turn 2: `serve` stops in the middle of the answer and comes back on the same port.
    await page.type('#message', SECOND_MESSAGE);
    await page.pressEnter();
    const partial = await until(async () => {
      const text = (await view(page)).turns[1]?.rounds[0]?.text ?? '';
      return text.length > 20 && text.length < LONG_ANSWER.length / 2 && text;
    }, 'the start of the second answer');
    expect(LONG_ANSWER.startsWith(partial)).toBe(true);
    await stopServe(served.process);
    await until(async () => (await view(page)).status.state === 'reconnecting', 'the page to notice');
    const gapShot = await save('chat-page-reconnecting.png', page);
    served = await startServe();
    const turn2 = await until(async () => {
      const turn = (await view(page)).turns[1];
      return turn?.end === 'completed' && turn;
    }, 'the second answer after the restart');
    expect(turn2.rounds).toEqual([{ round: 1, attempt: 1, text: LONG_ANSWER }]);
    const after = await view(page);
    expect(after.status.state).toBe('connected');
    expect(after.status.reconnects).toBeGreaterThanOrEqual(1);
    // The bridge resumed after the last event the browser had (Last-Event-ID): nothing came twice to be dropped.
    expect(after.status.duplicates).toBe(0);
    const text2 = await page.text();
    expect(occurrences(text2, LONG_ANSWER)).toBe(1);
    expect(occurrences(text2, FIRST_ANSWER)).toBe(1);
    expect(after.turns.map((turn) => turn.turn)).toEqual([1, 2]);
    expect(after.turns[1]!.user).toBe(SECOND_MESSAGE);
    expect(await page.evaluate<number>(`document.querySelectorAll('#transcript *:is(em, b, img)').length`)).toBe(0);
    const reconnectShot = await save('chat-page-reconnected.png', page);
    await stopServe(served.process);

    rows.add({
      group: 'Chat page of `durable-agent serve` in headless Chromium',
      fault: 'a model stream dropped after 3 chunks; `serve` restarted (SIGTERM, same port) in the middle of an answer',
      outcome:
        'the typed message, the tool call test__echo with its arguments and result, the retried answer shown once ' +
        '(attempt 2 replaced attempt 1), and after the restart the second answer completed once, resumed by ' +
        'Last-Event-ID',
      counts:
        `reconnects ${after.status.reconnects} · duplicate events 0 · screenshots: ` +
        [answerShot, gapShot, reconnectShot].map((file) => path.basename(file)).join(', '),
      passed: true,
    });
  });

  it('chat page: under scoped tokens, a tool call waiting for approval shows a card; decided elsewhere, the page shows it', async () => {
    // Under tokens: the page takes a scoped token from its URL fragment (the stream's query, the writes' header).
    const served = await startServe(approvalAgent.taskQueue, { DURABLE_AGENT_SERVE_SECRET: SECRET });
    const client = new DurableAgentClient({ client: env.client, taskQueue: approvalAgent.taskQueue });
    const id = 'chat-page-approved-elsewhere';
    try {
      const page = await browser!.newPage();
      // A token the server did not sign: the page says so and stops, rather than retrying for ever.
      await page.goto(`${served.url}/#conversation=${id}&token=not-a-token`);
      const refusedStream = await until(async () => {
        const status = (await view(page)).status;
        return status.state === 'error' && status.text;
      }, 'the refused stream');
      expect(refusedStream).toMatch(/token.*Open the page again with a new token\.\)$/i);

      await page.goto('about:blank');
      const readOnly = await createServeToken({ secret: SECRET, conversations: [id] });
      await page.goto(`${served.url}/#conversation=${id}&token=${readOnly}`);
      await until(async () => (await view(page)).status.state === 'connected', 'the page to connect with a read token');
      expect(await page.evaluate<string>('location.hash')).toBe(`#conversation=${id}`);
      await page.type('#message', 'Store the colour green.');
      await page.pressEnter();
      const refused = await until(
        async () => (await page.evaluate<string>(`document.getElementById('send-error').textContent`)) || undefined,
        'the refusal',
      );
      expect(refused).toMatch(/read/i);
      // Nothing typed is lost.
      expect(await page.evaluate<string>(`document.getElementById('message').value`)).toBe('Store the colour green.');

      await page.goto('about:blank');
      const readWrite = await createServeToken({ secret: SECRET, conversations: [id], write: true });
      await page.goto(`${served.url}/#conversation=${id}&token=${readWrite}`);
      await until(
        async () => (await view(page)).status.state === 'connected',
        'the page to connect with a write token',
      );
      await page.type('#message', 'Store the colour green.');
      await page.pressEnter();
      const pending = await until(async () => {
        const turn = (await view(page)).turns[0];
        return turn?.approvals[0]?.buttons.includes('Approve') && turn;
      }, 'the approval card');
      expect(pending.tools[0]).toMatchObject({ name: 'test__set_value', state: 'waiting for approval' });
      expect(JSON.parse(pending.tools[0]!.arguments)).toEqual({ key: 'colour', value: 'green' });
      expect(pending.approvals[0]).toMatchObject({
        classes: 'approval pending',
        head: 'Approval needed: test__set_value',
        arguments: '', // shown once, in the call's card
        buttons: ['Approve', 'Deny…'],
      });
      const approvalShot = await save('chat-page-approval.png', page);

      // Someone else decides (the CLI, a back office): the page follows the stream.
      const [call] = await client.pendingApprovals(id);
      await client.approve(id, call!.callId, { by: 'ops@example.com' });
      const approved = await until(async () => {
        const turn = (await view(page)).turns[0];
        return turn?.end === 'completed' && turn;
      }, 'the approved turn to finish');
      expect(approved.approvals).toEqual([
        expect.objectContaining({ classes: 'approval approved', outcome: 'Approved by ops@example.com', buttons: [] }),
      ]);
      expect(approved.tools[0]).toMatchObject({ classes: 'tool-call ok', preview: 'colour = green' });
      expect(approved.rounds.at(-1)?.text).toBe('Stored: colour = green.');

      rows.add({
        group: 'Chat page of `durable-agent serve` in headless Chromium',
        fault: 'none: a tool call that waits for a person (requireApproval), approved from the client',
        outcome:
          'with a read token the page streamed and showed the refusal of a message (kept in the box); with a write ' +
          'token the call showed an approval card with its tool, arguments and Approve / Deny… buttons; approved elsewhere, ' +
          'the card showed "Approved by ops@example.com" without buttons, the call ran and the model answered',
        counts: `screenshots: ${path.basename(approvalShot)}`,
        passed: true,
      });
    } finally {
      await client.close();
      await stopServe(served.process);
    }
  });

  it('chat page: a tool call waiting for approval is approved with a button, another denied with a reason', async () => {
    const served = await startServe(approvalAgent.taskQueue);
    try {
      const page = await browser!.newPage();
      await page.goto(`${served.url}/#conversation=chat-page-approvals`);
      await until(async () => (await view(page)).status.state === 'connected', 'the page to connect');

      await page.type('#message', 'Store the colour green.');
      await page.pressEnter();
      const pending = await until(async () => {
        const turn = (await view(page)).turns[0];
        return turn?.approvals[0]?.buttons.includes('Approve') && turn;
      }, 'the approval card');
      expect(pending.tools[0]).toMatchObject({ name: 'test__set_value', state: 'waiting for approval' });
      expect(pending.approvals[0]).toMatchObject({
        classes: 'approval pending',
        head: 'Approval needed: test__set_value',
      });
      await page.click('Approve');
      const approved = await until(async () => {
        const turn = (await view(page)).turns[0];
        return turn?.end === 'completed' && turn;
      }, 'the approved turn to finish');
      expect(approved.approvals).toEqual([expect.objectContaining({ classes: 'approval approved', buttons: [] })]);
      expect(approved.approvals[0]!.outcome).toBe('Approved');
      expect(approved.tools[0]).toMatchObject({ classes: 'tool-call ok', preview: 'colour = green' });
      expect(approved.rounds.at(-1)?.text).toBe('Stored: colour = green.');

      await page.type('#message', 'Now make it red.');
      await page.pressEnter();
      await until(async () => (await view(page)).turns[1]?.approvals[0]?.buttons.includes('Deny…'), 'the second card');
      await page.click('Deny…');
      await page.type('.approval.pending .deny-reason', 'Not today, keep it green.');
      const denialShot = await save('chat-page-denial.png', page);
      await page.click('Send denial');
      const denied = await until(async () => {
        const turn = (await view(page)).turns[1];
        return turn?.end === 'completed' && turn;
      }, 'the denied turn to finish');
      expect(denied.approvals).toEqual([expect.objectContaining({ classes: 'approval denied', buttons: [] })]);
      expect(denied.approvals[0]!.outcome).toBe('Denied: Not today, keep it green.');
      expect(denied.tools[0]!.classes).toBe('tool-call failed');
      expect(denied.tools[0]!.state).toMatch(/^denied · /);
      expect(denied.rounds.at(-1)?.text).toBe('Understood: I left the colour as it was.');

      rows.add({
        group: 'Chat page of `durable-agent serve` in headless Chromium',
        fault: 'none: two tool calls that wait for a person (requireApproval), decided on the page',
        outcome:
          'each call showed an approval card with its tool and arguments; Approve ran it (colour = green); Deny… with ' +
          'a reason denied the other, and the model answered without it',
        counts: `screenshots: ${path.basename(denialShot)}`,
        passed: true,
      });
    } finally {
      await stopServe(served.process);
    }
  });
  it('chat page: an input request is a form built from its schema; its answer is typed content; a URL request is a safe link', async () => {
    // Elicitation lands separately: the page's view gets events shaped as src/workflows/stream-events.ts defines
    // them; its card calls the action the page wires to POST /conversations/:id/inputs/:requestId.
    const served = await startServe();
    try {
      const page = await browser!.newPage();
      await page.goto(`${served.url}/`);
      await until(async () => (await view(page)).status.state === 'idle', 'the page to load');
      const result = await page.evaluate<{
        fields: string[];
        message: string;
        answers: unknown[];
        links: string[];
        texts: string[];
        outcome: string;
      }>(`(async () => {
        const { TranscriptView } = await import('./chat-view.js');
        const root = document.createElement('div');
        document.getElementById('transcript').append(root);
        const answers = [];
        const view = new TranscriptView(root, {
          sent: new Map(),
          actions: {
            approve: async () => undefined,
            deny: async () => undefined,
            answer: async (requestId, action, content) => void answers.push({ requestId, action, content }),
          },
        });
        const base = { turn: 1, tool: 'test__ask_user', server: 'test', requestedAt: '2026-11-23T14:00:00Z',
          expiresAt: '2026-11-23T14:10:00Z' };
        view.apply({ type: 'turn_started', turn: 1, messageId: 'm-1', offset: 0 });
        view.apply({ type: 'input_requested', ...base, requestId: 'r-1', callId: 'c-1', mode: 'form', offset: 1,
          message: 'Who are you? <img src=x onerror="window.pwned = 1">',
          requestedSchema: { type: 'object', required: ['name'], properties: {
            name: { type: 'string', title: 'Name' }, age: { type: 'integer' }, colour: { type: 'string', enum: ['red', 'green'] },
            subscribe: { type: 'boolean' } } } });
        const card = root.querySelector('.input-request');
        const fields = [...card.querySelectorAll('label .field-name')].map((node) => node.textContent);
        card.querySelector('input[name="name"]').value = 'Ada';
        card.querySelector('input[name="age"]').value = '36';
        card.querySelector('select[name="colour"]').value = 'green';
        [...card.querySelectorAll('button')].find((button) => button.textContent === 'Submit').click();
        await new Promise((resolve) => setTimeout(resolve, 50));
        view.apply({ type: 'input_answered', turn: 1, requestId: 'r-1', action: 'accept', answeredAt: '2026-11-23T14:01:00Z', offset: 2 });
        view.apply({ type: 'input_requested', ...base, requestId: 'r-2', callId: 'c-2', mode: 'url', offset: 3,
          message: 'Sign in, please.', url: 'javascript:alert(1)' });
        view.apply({ type: 'input_requested', ...base, requestId: 'r-3', callId: 'c-3', mode: 'url', offset: 4,
          message: 'Sign in here.', url: 'https://example.com/login' });
        const requests = [...root.querySelectorAll('.input-request')];
        return {
          fields,
          message: card.querySelector('.card-message').textContent,
          answers,
          links: [...root.querySelectorAll('a')].map((link) => link.href),
          texts: requests.map((node) => node.className),
          outcome: card.querySelector('.card-outcome').textContent,
        };
      })()`);
      expect(result.fields).toEqual(['Name *', 'age', 'colour', 'subscribe']);
      expect(result.message).toBe('Who are you? <img src=x onerror="window.pwned = 1">');
      expect(await page.evaluate<number>(`document.querySelectorAll('#transcript img').length`)).toBe(0);
      expect(result.answers).toEqual([
        { requestId: 'r-1', action: 'accept', content: { name: 'Ada', age: 36, colour: 'green', subscribe: false } },
      ]);
      expect(result.outcome).toBe('Answered');
      expect(result.texts).toEqual(['input-request accept', 'input-request pending', 'input-request pending']);
      // A javascript: URL stays text; an https one is a link that opens apart from the page.
      expect(result.links).toEqual(['https://example.com/login']);
    } finally {
      await stopServe(served.process);
    }
  });
});
