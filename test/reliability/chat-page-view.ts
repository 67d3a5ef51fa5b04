import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { cliPath, spawnTracked, type RunningProcess } from '../cli/helpers.js';
import type { Page } from './browser.js';
import { REPO_ROOT, until } from './helpers.js';

/** What the chat page tests run and read of the page (test/reliability/chat-page.reliability.ts). */

/** Where web-ui.reliability.ts saves its screenshots too; scripts/reliability.mjs copies them to docs/screenshots. */
const SCREENSHOTS_DIR = path.join(REPO_ROOT, 'test-results/screenshots');

/** A screenshot of the whole page, scrolled to the top first (the header sticks to where the view is). */
export async function save(name: string, page: Page): Promise<string> {
  await page.evaluate('window.scrollTo(0, 0)');
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  const file = path.join(SCREENSHOTS_DIR, name);
  writeFileSync(file, await page.screenshot());
  return file;
}

export interface TurnView {
  turn: number;
  user: string;
  rounds: { round: number; attempt: number; text: string }[];
  tools: { name: string; state: string; classes: string; arguments: string; preview: string }[];
  approvals: { classes: string; head: string; arguments: string; outcome: string; buttons: string[] }[];
  end: string | undefined;
}

export interface PageView {
  status: { state: string; reconnects: number; duplicates: number; text: string };
  turns: TurnView[];
}

/** What the page shows, read from its elements. */
export function view(page: Page): Promise<PageView> {
  return page.evaluate<PageView>(`(() => {
    const text = (node) => (node ? node.textContent : '');
    const status = document.getElementById('status');
    if (!status) return { status: { state: 'loading', reconnects: 0, duplicates: 0, text: '' }, turns: [] };
    return {
      status: {
        state: status.dataset.state,
        reconnects: Number(status.dataset.reconnects ?? 0),
        duplicates: Number(status.dataset.duplicates ?? 0),
        text: status.textContent,
      },
      turns: [...document.querySelectorAll('#transcript .turn')].map((turn) => ({
        turn: Number(turn.dataset.turn),
        user: text(turn.querySelector('.user')),
        rounds: [...turn.querySelectorAll('.text')].map((node) => ({
          round: Number(node.dataset.round),
          attempt: Number(node.dataset.attempt),
          text: node.textContent,
        })),
        tools: [...turn.querySelectorAll('.tool-call')].map((node) => ({
          name: text(node.querySelector('.tool-name')),
          state: text(node.querySelector('.tool-state')),
          classes: node.className,
          arguments: text(node.querySelector('.tool-arguments')),
          preview: text(node.querySelector('.tool-preview')),
        })),
        approvals: [...turn.querySelectorAll('.approval')].map((node) => ({
          classes: node.className,
          head: text(node.querySelector('.card-head')),
          arguments: text(node.querySelector('.approval-arguments')),
          outcome: text(node.querySelector('.card-outcome')),
          buttons: [...node.querySelectorAll('button')].filter((button) => !button.closest('[hidden]')).map(text),
        })),
        end: turn.querySelector('.turn-end') ? turn.querySelector('.turn-end').dataset.stopReason : undefined,
      })),
    };
  })()`);
}

/** How many times `needle` occurs in `haystack`. */
export function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/** `durable-agent serve` (the built CLI) as a process; resolves once it printed its URL. */
export async function startServeProcess(options: {
  port: number;
  address: string;
  taskQueue: string;
  environment: Record<string, string>;
}): Promise<{ process: RunningProcess; url: string }> {
  const bridge = spawnTracked(process.execPath, [cliPath, 'serve', '--port', String(options.port)], {
    ...process.env,
    ...options.environment,
    TEMPORAL_ADDRESS: options.address,
    DURABLE_AGENT_TASK_QUEUE: options.taskQueue,
  });
  const url = await until(() => /^(http:\S+)\n/.exec(bridge.output())?.[1], `serve to print its URL`, {
    timeoutMs: 30_000,
  }).catch((error: Error) => {
    throw new Error(`${error.message}; serve printed:\n${bridge.output()}`);
  });
  return { process: bridge, url };
}

export async function stopServe(bridge: RunningProcess): Promise<void> {
  bridge.child.kill('SIGTERM');
  expect(await bridge.exited).toBe(0);
}
