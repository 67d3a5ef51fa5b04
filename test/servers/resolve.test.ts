import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  ensureDevServer,
  ensureTestServer,
  resolveDevServer,
  resolveTestServer,
  ServerUnavailableError,
  silentLog,
} from '../../src/servers/index.js';

let emptyDir: string;
const savedPath = process.env.PATH;

beforeAll(async () => {
  emptyDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-resolve-test-'));
});

afterAll(async () => {
  process.env.PATH = savedPath;
  await fs.rm(emptyDir, { recursive: true, force: true });
});

const configWith = (env: Record<string, string>) =>
  loadConfig({ DURABLE_AGENT_CACHE_DIR: path.join(emptyDir, 'cache'), ...env });

test('resolve: TEMPORAL_CLI_PATH and TEMPORAL_TEST_SERVER_PATH win over everything, and must exist', async () => {
  const executable = path.join(emptyDir, 'my-temporal');
  await fs.writeFile(executable, '#!/bin/sh\n', { mode: 0o755 });
  await expect(resolveDevServer(configWith({ TEMPORAL_CLI_PATH: executable }))).resolves.toEqual({
    kind: 'path',
    path: executable,
    source: 'environment',
  });
  await expect(ensureTestServer(configWith({ TEMPORAL_TEST_SERVER_PATH: executable }))).resolves.toBe(executable);

  const missing = path.join(emptyDir, 'nothing-here');
  await expect(ensureDevServer(configWith({ TEMPORAL_CLI_PATH: missing }))).rejects.toThrow(
    /TEMPORAL_CLI_PATH=.*nothing-here is not an executable file/,
  );
  await expect(resolveTestServer(configWith({ TEMPORAL_TEST_SERVER_PATH: missing }))).rejects.toBeInstanceOf(
    ServerUnavailableError,
  );
});

test('resolve: without Go or Maven, one error says what to install (and the SDK download is the fallback)', async () => {
  process.env.PATH = emptyDir;
  try {
    const config = configWith({});
    await expect(resolveDevServer(config, { log: silentLog })).resolves.toMatchObject({ kind: 'sdk-download' });
    await expect(ensureDevServer(config, { log: silentLog, sdkDownload: false })).rejects.toThrow(
      /Cannot provision the Temporal dev server: `go` was not found on PATH\. Install Go .* or set TEMPORAL_CLI_PATH/,
    );
    await expect(ensureTestServer(config, { log: silentLog, sdkDownload: false })).rejects.toThrow(
      /`mvn` and `java` not found on PATH\. Install Maven and a Java runtime .* or set TEMPORAL_TEST_SERVER_PATH/,
    );
  } finally {
    process.env.PATH = savedPath;
  }
});
