import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { formatEncryptionKeys } from '../../src/codec/keys.js';
import { findFreePort } from '../../src/temporal-servers/index.js';
import { newKey } from '../codec/keys.js';
import { canary } from '../helpers/secrets.js';
import { cliPath, killAll, runCli, spawnTracked, type RunningProcess } from './helpers.js';

/**
 * `durable-agent dev` with encryption keys (issue 19, item 2): it starts a codec server and the embedded Web UI pointed
 * at it. The Web UI in a browser is checked in test/reliability/web-ui.reliability.ts; here, its settings and the codec
 * server it was given.
 */

const keys = [newKey('dev-key')];
const token = canary('dev-token');
let dataDir: string;
let running: RunningProcess | undefined;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-dev-codec-'));
});

afterAll(async () => {
  await killAll();
  // The dev server runs in its own process group: stop it too if the CLI did not.
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

test('dev with keys: starts a codec server for its Web UI (the UI is given it, with the token, never on the command line) and stops it on Ctrl-C', async () => {
  const [devPort, uiPort, codecPort] = [await findFreePort(), await findFreePort(), await findFreePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DURABLE_AGENT_DATA_DIR: dataDir,
    DURABLE_AGENT_DEV_PORT: String(devPort),
    DURABLE_AGENT_UI_PORT: String(uiPort),
    DURABLE_AGENT_CODEC_PORT: String(codecPort),
    DURABLE_AGENT_CODEC_TOKEN: token,
    DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys(keys),
    DURABLE_AGENT_TASK_QUEUE: `dev-codec-${crypto.randomUUID()}`,
  };
  delete env.TEMPORAL_ADDRESS;
  running = spawnTracked(process.execPath, [cliPath, 'dev'], env);
  const dev = running;
  await expect.poll(() => dev.output(), { timeout: 120_000, interval: 250 }).toMatch(/Worker: polling task queue/);
  const codecUrl = /Codec server: (http:\/\/\S+)/.exec(dev.output())?.[1];
  expect(codecUrl).toBe(`http://127.0.0.1:${codecPort}`);

  // The token is not on the dev server's command line, which every local user can read (ps); the private file that
  // handed it over is gone once the server has read it.
  const lock = JSON.parse(await fs.readFile(path.join(dataDir, 'dev.lock'), 'utf8')) as { serverPid: number };
  const commandLine = (await fs.readFile(`/proc/${lock.serverPid}/cmdline`, 'utf8')).split('\0');
  expect(commandLine.slice(0, 3)).toEqual([expect.stringMatching(/temporal$/), 'server', 'start-dev']);
  expect(commandLine.join(' ')).not.toContain(token);
  const flagsFile = commandLine[commandLine.indexOf('--env-file') + 1]!;
  await expect(fs.access(flagsFile)).rejects.toThrow();

  // The Web UI's settings name the codec endpoint, with the token as its first path segment.
  const settings = (await (await fetch(`http://127.0.0.1:${uiPort}/api/v1/settings`)).json()) as {
    Codec?: { Endpoint?: string };
  };
  expect(settings.Codec?.Endpoint).toBe(`${codecUrl}/${token}`);

  // The endpoint decodes what the worker's keys encrypt, for the Web UI's origin.
  const secret = canary('secret');
  const [encrypted] = await new EncryptionCodec(keys).encode([defaultPayloadConverter.toPayload(secret)]);
  const body = {
    payloads: [
      {
        metadata: Object.fromEntries(
          Object.entries(encrypted!.metadata!).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
        ),
        data: Buffer.from(encrypted!.data!).toString('base64'),
      },
    ],
  };
  const response = await fetch(`${settings.Codec!.Endpoint!}/decode`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', Origin: `http://localhost:${uiPort}` },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('access-control-allow-origin')).toBe(`http://localhost:${uiPort}`);
  const decoded = (await response.json()) as { payloads: { data: string }[] };
  expect(Buffer.from(decoded.payloads[0]!.data, 'base64').toString('utf8')).toBe(JSON.stringify(secret));
  // Without the token, nothing.
  const refused = await fetch(`${codecUrl}/decode`, { method: 'POST', body: JSON.stringify(body) });
  expect(refused.status).toBe(401);

  dev.child.kill('SIGINT');
  expect(await dev.exited).toBe(0);
  await expect(fetch(`${codecUrl}/decode`, { method: 'POST' })).rejects.toThrow();
});

test('dev with keys: a codec port in use is a ConfigError naming DURABLE_AGENT_CODEC_PORT (exit 2), before any server starts', async () => {
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as net.AddressInfo;
  try {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_DATA_DIR: dataDir,
      DURABLE_AGENT_DEV_PORT: String(await findFreePort()),
      DURABLE_AGENT_UI_PORT: String(await findFreePort()),
      DURABLE_AGENT_CODEC_PORT: String(port),
      DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys(keys),
    };
    delete env.TEMPORAL_ADDRESS;
    const run = await runCli(['dev'], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      `Port ${port} on 127.0.0.1 is already in use, so the codec server for the Web UI cannot start: set ` +
        'DURABLE_AGENT_CODEC_PORT to a free port.',
    );
    expect(run.stdout).not.toMatch(/Temporal dev server:/);
  } finally {
    await new Promise((resolve) => taken.close(resolve));
  }
});
