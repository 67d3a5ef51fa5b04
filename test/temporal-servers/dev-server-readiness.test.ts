import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startDevServer } from '../../src/temporal-servers/dev-server-process.js';
import { waitForFrontend } from '../../src/temporal-servers/frontend-readiness.js';
import { findFreePort, waitForPort } from '../../src/temporal-servers/ports.js';

/**
 * `dev` once exited while starting with `Failed to call GetSystemInfo … Frontend is not healthy yet`: the dev server
 * was awaited until its port opened, not until its frontend answered. A real gRPC server that refuses GetSystemInfo
 * the way Temporal's frontend does for a moment after its port opens (./refusing-frontend.mjs) stands in for it.
 */

const frontend = fileURLToPath(new URL('./refusing-frontend.mjs', import.meta.url));
const directory = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-readiness-'));
const stops: Array<() => unknown> = [];

afterAll(async () => {
  await Promise.allSettled(stops.map((stop) => stop()));
  rmSync(directory, { recursive: true, force: true });
});

describe('the dev server is ready when its frontend answers', () => {
  test('startDevServer retries GetSystemInfo through "Frontend is not healthy yet" and resolves once it answers', async () => {
    // The executable startDevServer runs, as `temporal` would be (it `exec`s, so stopping it stops the server).
    const launcher = path.join(directory, 'temporal');
    writeFileSync(launcher, `#!/bin/sh\nexec "${process.execPath}" "${frontend}" "$@"\n`);
    chmodSync(launcher, 0o755);
    const [devPort, uiPort] = [await findFreePort(), await findFreePort()];
    const config = loadConfig({
      DURABLE_AGENT_DATA_DIR: path.join(directory, 'data'),
      DURABLE_AGENT_DEV_PORT: String(devPort),
      DURABLE_AGENT_UI_PORT: String(uiPort),
    });

    const server = await startDevServer(launcher, config);
    stops.push(() => server.stop());
    const calls = (await (await fetch(`http://127.0.0.1:${uiPort}/`)).json()) as object;
    expect(calls).toEqual({ refused: 3, answered: 1 });
    await server.stop();
  });

  test('waitForFrontend gives up at its deadline, naming the address and the last answer', async () => {
    const port = await findFreePort();
    const child = spawn(process.execPath, [frontend, '--port', String(port)], {
      env: { ...process.env, REFUSALS: String(Number.MAX_SAFE_INTEGER) },
      stdio: 'ignore',
    });
    stops.push(() => child.kill('SIGKILL'));
    await waitForPort(port);

    const started = Date.now();
    // Long enough that a loaded machine still gets an answer before the deadline: the message must name the last one.
    await expect(waitForFrontend(`127.0.0.1:${port}`, { timeoutMs: 4_000, intervalMs: 100 })).rejects.toThrow(
      `The Temporal frontend at 127.0.0.1:${port} did not answer within 4 s: 14 UNAVAILABLE: Frontend is not healthy yet`,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test('waitForFrontend names the last answer when its last attempt is cut short by the deadline', async () => {
    const port = await findFreePort();
    // Each answer takes 1 s: the first attempt is refused at about 1 s, the second starts at 1.1 s with 0.7 s left,
    // and the deadline cuts it short (DEADLINE_EXCEEDED), which says nothing of the frontend.
    const child = spawn(process.execPath, [frontend, '--port', String(port)], {
      env: { ...process.env, REFUSALS: String(Number.MAX_SAFE_INTEGER), ANSWER_DELAY_MS: '1000' },
      stdio: 'ignore',
    });
    stops.push(() => child.kill('SIGKILL'));
    await waitForPort(port);
    await expect(waitForFrontend(`127.0.0.1:${port}`, { timeoutMs: 1_800, intervalMs: 100 })).rejects.toThrow(
      `The Temporal frontend at 127.0.0.1:${port} did not answer within 1.8 s: 14 UNAVAILABLE: Frontend is not healthy yet`,
    );
  });
});
