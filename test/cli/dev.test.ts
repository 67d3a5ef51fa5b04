import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { findFreePort, isPortOpen } from '../../src/temporal-servers/index.js';

// The built CLI, as a user runs it: `npm test` builds before vitest starts.
const cli = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));

interface RunningCli {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startCli(args: string[], env: NodeJS.ProcessEnv): RunningCli {
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

let dataDir: string;
let env: NodeJS.ProcessEnv;
let devPort: number;
let uiPort: number;
let first: RunningCli | undefined;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-dev-test-'));
  devPort = await findFreePort();
  uiPort = await findFreePort();
  env = {
    ...process.env,
    DURABLE_AGENT_DATA_DIR: dataDir,
    DURABLE_AGENT_DEV_PORT: String(devPort),
    DURABLE_AGENT_UI_PORT: String(uiPort),
    DURABLE_AGENT_TASK_QUEUE: `dev-test-${crypto.randomUUID()}`,
  };
  delete env.TEMPORAL_ADDRESS;
});

afterAll(async () => {
  // On a failed assertion the CLI may still run, and its server runs in its own process group: stop both.
  if (first && first.child.exitCode === null && first.child.signalCode === null) {
    first.child.kill('SIGKILL');
    await first.exited;
  }
  const lock = await fs.readFile(path.join(dataDir, 'dev.lock'), 'utf8').catch(() => undefined);
  const serverPid = lock ? (JSON.parse(lock) as { serverPid?: number }).serverPid : undefined;
  if (serverPid !== undefined) {
    try {
      process.kill(serverPid, 'SIGKILL');
    } catch {
      // Already stopped.
    }
  }
  await fs.rm(dataDir, { recursive: true, force: true });
});

test('dev: serves the Web UI, refuses a second instance, and leaves nothing listening after Ctrl-C', async () => {
  first = startCli(['dev'], env);
  const running = first;

  await expect.poll(() => running.output(), { timeout: 120_000, interval: 250 }).toMatch(/Worker: polling task queue/);
  const uiUrl = /Web UI: (http:\/\/localhost:\d+)/.exec(running.output())?.[1];
  expect(uiUrl).toBe(`http://localhost:${uiPort}`);
  const response = await fetch(uiUrl!);
  expect(response.status).toBe(200);

  const second = startCli(['dev'], env);
  expect(await second.exited).toBe(69);
  expect(second.output()).toMatch(/durable-agent dev is already running \(pid \d+/);
  expect(second.output()).not.toMatch(/\n\s+at /);

  running.child.kill('SIGINT');
  expect(await running.exited).toBe(0);
  expect(await isPortOpen(devPort)).toBe(false);
  expect(await isPortOpen(uiPort)).toBe(false);
  await expect(fs.access(path.join(dataDir, 'dev.lock'))).rejects.toThrow();
}, 180_000);
