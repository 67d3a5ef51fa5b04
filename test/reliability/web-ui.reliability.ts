import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../../src/mcp/config.js';
import { findFreePort } from '../../src/servers/ports.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { askUpdate } from '../../src/workflows/definitions.js';
import { Browser } from './browser.js';
import { killLeftovers, REPO_ROOT, ResultRows } from './helpers.js';

/**
 * Issue 8, item 6: the Temporal Web UI of the dev server, in headless Chromium, tells the story of a conversation: the
 * list shows the conversation by its readable workflow id, and its page shows the model and tool activity summaries
 * the workflow sets. Screenshots go to test-results/screenshots (CI keeps test-results/); scripts/reliability.mjs
 * copies them to docs/screenshots.
 */

export const SCREENSHOTS_DIR = path.join(REPO_ROOT, 'test-results/screenshots');

let env: TestWorkflowEnvironment;
let uiPort: number;
let mcp: RunningTestMcpServer;
let agent: TestAgent;
let browser: Browser | undefined;
const rows = new ResultRows('web-ui');

beforeAll(async () => {
  uiPort = await findFreePort();
  env = await createLocalEnvironment({ uiPort });
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
});
