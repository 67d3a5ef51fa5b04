import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes, randomUUID } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config/index.js';
import type { HttpServerConfig } from '../../src/worker/mcp/config.js';
import { ensureDevServer } from '../../src/temporal-servers/dev-server.js';
import { findFreePort } from '../../src/temporal-servers/ports.js';
import { startScriptedModel } from '../../src/testing/scripted-model/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { DurableAgentClient } from '../../src/client/index.js';
import { askUpdate } from '../../src/workflows/definitions.js';
import { Browser } from './browser.js';
import { payloadTexts, startEncryptedDev, temporalWorkflowShow } from './encrypted-dev.js';
import { CLI, killLeftovers, REPO_ROOT, ResultRows } from './helpers.js';

/**
 * Issue 8, item 6: the Temporal Web UI of the dev server, in headless Chromium, tells the story of a conversation: the
 * list shows the conversation by its readable workflow id, and its page shows the model and tool activity summaries
 * the workflow sets; issue 17: a conversation whose tool call awaits approval names the pending call in its current
 * details. Screenshots go to test-results/screenshots (CI keeps test-results/); scripts/reliability.mjs
 * copies them to docs/screenshots.
 */

// Asynchronous: the scripted model answers from this process while the CLI waits.
const execFileAsync = promisify(execFile);

export const SCREENSHOTS_DIR = path.join(REPO_ROOT, 'test-results/screenshots');

let env: TestWorkflowEnvironment;
let uiPort: number;
let mcp: RunningTestMcpServer;
let server: HttpServerConfig;
let agent: TestAgent;
let browser: Browser | undefined;
const rows = new ResultRows('web-ui');

beforeAll(async () => {
  uiPort = await findFreePort();
  env = await createLocalEnvironment({ uiPort });
  mcp = await startTestMcpServer({ transport: 'http' });
  server = {
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
      {
        toolCalls: [
          { name: 'test__echo', arguments: { text: 'hello from the tool' } },
          { name: 'test__set_value', arguments: { key: 'colour', value: 'blue' } },
        ],
      },
      { content: 'I echoed and stored the colour.' },
    ],
  });
  browser = await Browser.launch();
});

afterAll(async () => {
  rows.write();
  await browser?.close();
  await agent?.close();
  await mcp?.close();
  await env?.teardown();
  killLeftovers();
});

function save(name: string, png: Buffer): string {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const file = path.join(SCREENSHOTS_DIR, name);
  writeFileSync(file, png);
  return file;
}

describe('the Web UI in a real browser', () => {
  it('web UI: lists the conversation and shows its model and tool activity summaries', async () => {
    const handle = await agent.startConversation('web-ui-demo');
    const result = await handle.executeUpdate(askUpdate, { args: [{ id: 'm-1', content: 'Echo and store.' }] });
    expect(result.answer).toBe('I echoed and stored the colour.');
    const base = `http://127.0.0.1:${uiPort}/namespaces/default`;
    const page = await browser!.newPage();

    await page.goto(`${base}/workflows`);
    await page.waitForText([/conversation-web-ui-demo/, /conversationWorkflow/]);
    const listShot = save('web-ui-workflows.png', await page.screenshot());

    await page.goto(`${base}/workflows/${handle.workflowId}/${handle.firstExecutionRunId}/history`);
    await page.waitForText([
      /turn 1 · model default · round 1 · lists tools/,
      /turn 1 · tool test__echo/,
      /turn 1 · tool test__set_value/,
    ]);
    // The compact view groups each activity's events under its summary: the story of the turn at a glance.
    await page.click('Compact');
    await page.waitForText([/turn 1 · model scripted-model · round 2/, /turn 1 · tool test__echo/]);
    const historyShot = save('web-ui-conversation.png', await page.screenshot());

    rows.add({
      group: 'Web UI (dev server) in headless Chromium',
      fault: 'none: a conversation with a model call, two parallel tool calls and the answer',
      outcome:
        'the workflow list shows conversation-web-ui-demo; its page shows the activity summaries ' +
        '"turn 1 · model default · round 1 · lists tools", "turn 1 · tool test__echo", ' +
        '"turn 1 · tool test__set_value", "turn 1 · model scripted-model · round 2" ' +
        '(compact view)',
      counts: `screenshots: ${path.basename(listShot)}, ${path.basename(historyShot)}`,
      passed: true,
    });
  });

  it('web UI: the current details of a conversation awaiting approval name the pending call', async () => {
    // The same MCP server, but every call of its tools waits for a person ("requireApproval": "always").
    const waiting = await startTestAgent({
      env,
      mcpServers: [{ ...server, requireApproval: 'always' }],
      script: [
        { toolCalls: [{ name: 'test__set_value', arguments: { key: 'colour', value: 'green' } }] },
        { content: 'Stored green, now that it is approved.' },
      ],
    });
    const client = new DurableAgentClient({ client: env.client, taskQueue: waiting.taskQueue });
    const runs = () => mcp.counters.calls.set_value ?? 0;
    const before = runs();
    try {
      const asked = client.ask('web-ui-approval', 'Store green as the colour.');
      let pending: Awaited<ReturnType<DurableAgentClient['pendingApprovals']>> = [];
      await expect
        .poll(async () => (pending = await client.pendingApprovals('web-ui-approval')).length, {
          timeout: 60_000,
          interval: 200,
        })
        .toBe(1);
      const [call] = pending;
      expect(call!.tool).toBe('test__set_value');
      expect(runs()).toBe(before);

      const page = await browser!.newPage();
      const base = `http://127.0.0.1:${uiPort}/namespaces/default`;
      await page.goto(`${base}/workflows/conversation-web-ui-approval`);
      // The Web UI asks the running workflow for its current details (the metadata query) on the User Metadata tab.
      await page.waitForText([/User Metadata/]);
      await page.click('User Metadata');
      // What the browser renders from the workflow's current details (markdown, in the tab's frame): the phase, the
      // pending call's tool and the model's call id, its arguments.
      const text = await page.waitForText([
        /awaiting_approval/,
        new RegExp(`Awaiting approval · test__set_value ${call!.callId}`),
      ]);
      expect(text).toContain('"value":"green"');
      const shot = save('web-ui-awaiting-approval.png', await page.screenshot());

      // Approved from the client, the call runs once and the turn finishes.
      const decision = await client.approve('web-ui-approval', call!.callId, { by: 'web-ui-check' });
      expect(decision.decision).toBe('approved');
      const result = await asked;
      expect(result.answer).toBe('Stored green, now that it is approved.');
      expect(runs() - before).toBe(1);

      rows.add({
        group: 'Web UI (dev server) in headless Chromium',
        fault: 'none: a tool call of a server with "requireApproval": "always" waits for a person',
        outcome:
          `the conversation's page shows its current details: awaiting_approval and "Awaiting approval · ` +
          `test__set_value <call id>" with the arguments; approved from the client, the call ran and the turn finished`,
        counts: `screenshot: ${path.basename(shot)}`,
        passed: true,
      });
    } finally {
      await client.close();
      await waiting.close();
    }
  });

  it('web UI with encryption: durable-agent dev shows decrypted payloads through its codec server; temporal workflow show shows ciphertext', async () => {
    const codeWord = randomUUID();
    const message = `Please remember the code word ${codeWord}`;
    // The system prompt is in the workflow's input, which the Web UI shows on the conversation's page.
    const systemWord = randomUUID();
    const systemPrompt = `You keep secrets such as ${systemWord}.`;
    const answer = `The code word is safe with me: ${randomUUID()}`;
    // The second turn's model call fails with a provider error quoting the user: its message is encrypted too.
    const failWord = randomUUID();
    const model = await startScriptedModel({
      script: [
        { content: answer },
        { error: { status: 400, body: { error: { message: `Your message quoted ${failWord}`, type: 'bad' } } } },
      ],
    });
    const token = randomBytes(24).toString('hex');
    const dev = await startEncryptedDev({
      keys: [{ id: 'web-ui', key: randomBytes(32) }],
      token,
      modelBaseUrl: model.baseUrl,
    });
    try {
      const asked = await execFileAsync(
        process.execPath,
        [CLI, 'ask', '-c', 'secret-plans', '--system-prompt', systemPrompt, message],
        {
          env: { ...dev.env, TEMPORAL_ADDRESS: dev.address },
          encoding: 'utf8',
          timeout: 60_000,
        },
      );
      expect(asked.stderr).toBe('');
      expect(asked.stdout).toContain(answer);
      const failed = await execFileAsync(process.execPath, [CLI, 'ask', '-c', 'secret-plans', 'And now?'], {
        env: { ...dev.env, TEMPORAL_ADDRESS: dev.address },
        encoding: 'utf8',
        timeout: 60_000,
      }).catch((error: { stdout: string; stderr: string }) => error);
      expect(`${failed.stdout}${failed.stderr}`).toContain(failWord);
      const workflowId = 'conversation-secret-plans';

      // The real temporal CLI: without the codec, only ciphertext; through the codec server, the conversation.
      const temporal = await ensureDevServer(loadConfig());
      const raw = await temporalWorkflowShow(temporal, dev.address, workflowId);
      expect(raw).toContain(Buffer.from('binary/encrypted').toString('base64'));
      const rawText = payloadTexts(raw);
      const decoded = payloadTexts(
        await temporalWorkflowShow(temporal, dev.address, workflowId, { endpoint: dev.codecUrl, token }),
      );
      for (const text of [message, answer, systemPrompt, failWord]) {
        expect(raw).not.toContain(text);
        expect(rawText).not.toContain(text);
      }
      for (const text of [message, answer, systemPrompt, failWord]) expect(decoded).toContain(text);
      expect(raw).toContain('Encoded failure');

      // The embedded Web UI asks the codec server (CORS, the token in its endpoint) and shows the decrypted input.
      const page = await browser!.newPage();
      const base = `http://127.0.0.1:${dev.uiPort}/namespaces/default`;
      await page.goto(`${base}/workflows/${workflowId}`);
      // The input (encrypted in history) and the model call's summary (user metadata, encrypted too), decrypted.
      await page.waitForText([new RegExp(systemWord), /turn 1 · model default · round 1/]);
      const shot = save('web-ui-decrypted.png', await page.screenshot());
      // The failed model call of turn 2: its row says only "Encoded failure"; opened, the Web UI shows the message and
      // stack trace decoded through the codec server (the failure's encodedAttributes).
      await page.click('Event History');
      await page.waitForText([/Activity Task Failed/]);
      await page.evaluate(`(() => {
        const rows = [...document.querySelectorAll('tr[data-testid="event-summary-row"]')];
        rows.find((row) => row.textContent.includes('Activity Task Failed')).click();
        return true;
      })()`);
      const failure = await page.waitForText([/"encodedAttributes"/, new RegExp(`Your message quoted ${failWord}`)]);
      expect(failure).toMatch(/Failure Message\s+Encoded failure/);
      const failureShot = save('web-ui-decrypted-failure.png', await page.screenshot());

      rows.add({
        group: 'Web UI (dev server) in headless Chromium',
        fault: 'encryption keys set: payloads in history are AES-256-GCM ciphertext',
        outcome:
          'durable-agent dev started its codec server and pointed the embedded Web UI at it: the conversation page ' +
          'shows the input (its system prompt) and the activity summaries decrypted; `temporal workflow show` shows only binary/encrypted payloads, and the ' +
          'message, system prompt and answer with --codec-endpoint; a failed model call quoting the user reads ' +
          '"Encoded failure" in history and shows its message decoded in the Web UI',
        counts: `screenshots: ${path.basename(shot)}, ${path.basename(failureShot)}`,
        passed: true,
      });
    } finally {
      await dev.stop();
      await model.close();
    }
  });
});
