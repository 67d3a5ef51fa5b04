import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findFreePort } from '../../src/temporal-servers/ports.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { cliPath, killAll, spawnTracked, type RunningProcess } from '../cli/helpers.js';
import {
  DevServerProcess,
  killLeftovers,
  requireBuild,
  WorkerProcess,
  writeMcpConfig,
} from '../reliability/helpers.js';
import { httpRequest } from './http-request.js';

/**
 * Issue 18, item 5: `durable-agent serve` keeps working across a Temporal server restart, and `/readyz` says when
 * Temporal is gone. Real processes: the dev server (killed with SIGKILL and started again on its database file), a
 * worker, and `serve` with a secret; a browser's stream stays open through the outage.
 */

let tmp: string;
let port: number;
let server: DevServerProcess | undefined;
let worker: WorkerProcess | undefined;
let model: ScriptedModel;
let answers = 0;
const TASK_QUEUE = 'serve-restart';

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-serve-restart-'));
  port = await findFreePort();
  server = await startServer();
  model = await startScriptedModel({ script: () => ({ content: `Answer ${++answers}.` }), name: 'serve restart' });
  const mcpConfigPath = path.join(tmp, 'mcp.json');
  writeMcpConfig(mcpConfigPath, path.join(tmp, 'counter.jsonl'));
  worker = await WorkerProcess.start({
    temporalAddress: `127.0.0.1:${port}`,
    taskQueue: TASK_QUEUE,
    modelBaseUrl: model.baseUrl,
    mcpConfigPath,
    logFile: path.join(tmp, 'worker.log'),
  });
}, 180_000);

afterAll(async () => {
  await killAll();
  await worker?.kill();
  await server?.kill();
  killLeftovers([path.join(tmp, 'counter.jsonl')]);
  await model?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function startServer(): Promise<DevServerProcess> {
  return DevServerProcess.start({
    port,
    dbFile: path.join(tmp, 'temporal.sqlite'),
    logFile: path.join(tmp, 'server.log'),
  });
}

async function serve(): Promise<{ bridge: RunningProcess; url: string }> {
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('DURABLE_AGENT_')),
  );
  const bridge = spawnTracked(process.execPath, [cliPath, 'serve', '--port', '0'], {
    ...environment,
    TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
    DURABLE_AGENT_TASK_QUEUE: TASK_QUEUE,
    DURABLE_AGENT_SERVE_TOKEN: 'operator-token-0123456789abcdef',
  });
  await expect.poll(() => bridge.output(), { timeout: 30_000 }).toMatch(/\n/);
  return { bridge, url: bridge.output().split('\n')[0]! };
}

const auth = { authorization: 'Bearer operator-token-0123456789abcdef' };

async function send(url: string, content: string, id: string): Promise<number> {
  const sent = await httpRequest(`${url}/conversations/restart-1/messages`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ content, id }),
  });
  return sent.status;
}

async function readiness(url: string): Promise<unknown> {
  return (await httpRequest(`${url}/readyz`)).json();
}

it('serve: a stream open while Temporal restarts gets the next turn; /readyz is 503 while it is down, 200 after', async () => {
  const { bridge, url } = await serve();
  expect(await send(url, 'before', 'm-1')).toBe(202);
  await expect.poll(() => readiness(url)).toEqual({ ready: true });

  // A browser reads the first turn and keeps the stream open.
  let seen = '';
  const browser = httpRequest(`${url}/conversations/restart-1/events`, {
    headers: auth,
    until: (text) => {
      seen = text;
      return text.includes('"type":"turn_finished","turn":2');
    },
  });
  await expect.poll(() => seen, { timeout: 30_000 }).toContain('event: turn_finished');

  await server!.kill();
  server = undefined;
  await expect
    .poll(() => readiness(url), { timeout: 15_000, interval: 500 })
    .toMatchObject({ ready: false, error: { type: 'TemporalUnreachable' } });
  expect((await httpRequest(`${url}/readyz`)).status).toBe(503);
  await sleep(2_000);

  server = await startServer();
  await expect.poll(() => readiness(url), { timeout: 60_000, interval: 500 }).toEqual({ ready: true });
  // The same message id, so a send retried across the reconnection queues one message.
  await expect.poll(() => send(url, 'after', 'm-2'), { timeout: 60_000, interval: 1_000 }).toBe(202);
  const read = await Promise.race([browser, sleep(90_000).then(() => undefined)]);
  expect(read?.body).toContain('"type":"turn_finished","turn":2');
  expect(read?.body).toContain('Answer 2.');

  bridge.child.kill('SIGTERM');
  expect(await Promise.race([bridge.exited, sleep(10_000).then(() => 'still running')])).toBe(0);
}, 240_000);
