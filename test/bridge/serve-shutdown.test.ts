import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { ScriptBook } from '../client/helpers.js';
import { cliPath, killAll, spawnTracked, type RunningProcess } from '../cli/helpers.js';

let env: TestWorkflowEnvironment | undefined;
let agent: TestAgent | undefined;
let client: DurableAgentClient;
const book = new ScriptBook('serve-stop');

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script: book.script });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterEach(killAll);

afterAll(async () => {
  await killAll();
  await stopTemporal();
});

/** Stop the worker and the dev server: Temporal is unreachable from then on. */
async function stopTemporal(): Promise<void> {
  await agent?.close();
  agent = undefined;
  await env?.teardown();
  env = undefined;
}

/** `durable-agent serve` as a process, and its URL (the first line of its stdout). */
async function serve(address: string): Promise<{ bridge: RunningProcess; url: string; stderr: () => string }> {
  const bridge = spawnTracked(process.execPath, [cliPath, 'serve', '--port', '0'], {
    ...process.env,
    TEMPORAL_ADDRESS: address,
  });
  let stdout = '';
  let stderr = '';
  bridge.child.stdout!.on('data', (chunk: string) => (stdout += chunk));
  bridge.child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  await expect.poll(() => stdout, { timeout: 30_000 }).toMatch(/\n/);
  return { bridge, url: stdout.split('\n')[0]!, stderr: () => stderr };
}

/** A browser on a conversation's events: `opened` once the response came, `read` once `seen` holds for what it read. */
function watchEvents(
  url: string,
  seen: (text: string) => boolean,
): { opened: Promise<void>; read: Promise<void>; stop: () => void } {
  const controller = new AbortController();
  const response = fetch(url, { signal: controller.signal, headers: { accept: 'text/event-stream' } });
  const read = (async () => {
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of (await response).body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (seen(text)) return;
    }
  })();
  read.catch(() => undefined);
  return {
    opened: response.then(() => undefined),
    read,
    stop: () => controller.abort(),
  };
}

/**
 * SIGTERM, then the exit. The bound only keeps a bridge that never stops from hanging the test: before the fix it kept
 * running for 15 s (a linger timer and the event stream's keep-alive) and could end with a stack trace.
 */
async function stop(bridge: RunningProcess): Promise<{ code: number | null | 'still running'; ms: number }> {
  const started = performance.now();
  bridge.child.kill('SIGTERM');
  const code = await Promise.race([bridge.exited, sleep(10_000).then(() => 'still running' as const)]);
  return { code, ms: Math.round(performance.now() - started) };
}

it('serve: SIGTERM with a browser waiting for a conversation to start stops the bridge, exit 0, nothing on stderr', async () => {
  // A front end opens the stream first, then sends the first message: nothing has been written to the stream yet.
  const id = book.conversation('waiting');
  const { bridge, url, stderr } = await serve(env!.address);
  const browser = watchEvents(`${url}/conversations/${id}/events`, () => false);
  await browser.opened;

  const stopped = await stop(bridge);
  console.log(`serve stopped ${stopped.ms} ms after SIGTERM (Temporal up, a browser waiting)`);
  browser.stop();
  expect(stopped.code).toBe(0);
  expect(stderr()).toBe('');
});

it('serve: SIGTERM while Temporal is unreachable stops the bridge, exit 0, no stack trace', async () => {
  const id = book.conversation('unreachable', [{ content: 'An answer before Temporal goes away.' }]);
  await client.ask(id, 'hello');
  const { bridge, url, stderr } = await serve(env!.address);
  const browser = watchEvents(`${url}/conversations/${id}/events`, (text) => text.includes('event: turn_finished'));
  await browser.read;

  // The upstream subscription is waiting in a poll when the cluster goes away; its calls are retried from then on.
  await stopTemporal();
  await sleep(1_000);
  const stopped = await stop(bridge);
  console.log(`serve stopped ${stopped.ms} ms after SIGTERM (Temporal unreachable for 1 s)`);
  browser.stop();
  expect(stopped.code).toBe(0);
  expect(stderr()).not.toMatch(/\n\s+at |Channel has been shut down/);
});
