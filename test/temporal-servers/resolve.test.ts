import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import {
  ensureDevServer,
  ensureTestServer,
  resolveDevServer,
  resolveTestServer,
  ServerUnavailableError,
  silentLog,
} from '../../src/temporal-servers/index.js';
import { cachedExecutablePath as cachedExecutable } from '../../src/temporal-servers/cache.js';
import { ensureServer, resolveServer, type ServerRecipe } from '../../src/temporal-servers/provision.js';

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
    // Temporal's release binary needs no tools (test/temporal-servers/cli-release.test.ts); the build from source does.
    const config = configWith({ DURABLE_AGENT_TEMPORAL_CLI_SOURCE: 'go' });
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

/** A way to provide a server that any machine can go: a shell script, after `missing` says the tools are there. */
function thingSource(cacheDir: string, name: string, missing: string | undefined, builds: string[], fails?: string) {
  return {
    name,
    entry: { cacheDir, name, executable: 'thing' },
    missingTools: async () => missing,
    description: `making ${name}`,
    provide: async (stagingDir: string) => {
      builds.push(name);
      if (fails !== undefined) throw new Error(fails);
      await fs.writeFile(path.join(stagingDir, 'thing'), '#!/bin/sh\n', { mode: 0o755 });
    },
  };
}

function recipe(cacheDir: string, missing: string | undefined, builds: string[]): ServerRecipe {
  return {
    kind: 'dev server',
    override: { variable: 'TEMPORAL_CLI_PATH', path: undefined },
    sources: [thingSource(cacheDir, 'thing-1.0.0', missing, builds)],
  };
}

test('resolve: one search for both servers: build once into the cache, then answer from the cache', async () => {
  const cacheDir = path.join(emptyDir, 'recipe-cache');
  const builds: string[] = [];
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  const executable = path.join(cacheDir, 'thing-1.0.0', 'thing');

  await expect(resolveServer(recipe(cacheDir, undefined, builds), { log })).resolves.toEqual({
    kind: 'path',
    path: executable,
    source: 'built',
  });
  await expect(resolveServer(recipe(cacheDir, undefined, builds), { log })).resolves.toEqual({
    kind: 'path',
    path: executable,
    source: 'cache',
  });
  await expect(ensureServer(recipe(cacheDir, undefined, builds), { log })).resolves.toBe(executable);
  expect(builds).toHaveLength(1);
  expect(lines[0]).toBe('[durable-agent] dev server: making thing-1.0.0');
});

test('resolve: without the build tools the answer is the SDK download, and ensure without it names what is missing', async () => {
  const cacheDir = path.join(emptyDir, 'recipe-no-tools');
  const builds: string[] = [];
  const missing = '`thing-compiler` not found on PATH. Install it.';
  await expect(resolveServer(recipe(cacheDir, missing, builds), { log: silentLog })).resolves.toEqual({
    kind: 'sdk-download',
    reason: missing,
  });
  await expect(ensureServer(recipe(cacheDir, missing, builds), { log: silentLog, sdkDownload: false })).rejects.toThrow(
    `Cannot provision the Temporal dev server: ${missing}`,
  );
  expect(builds).toHaveLength(0);
});

test("resolve: any source's cache entry is used before anything is made, whichever source is preferred", async () => {
  const cacheDir = path.join(emptyDir, 'recipe-second-cached');
  const builds: string[] = [];
  const second = thingSource(cacheDir, 'thing-built', undefined, builds);
  await fs.mkdir(path.join(cacheDir, 'thing-built'), { recursive: true });
  await fs.writeFile(cachedExecutable(second.entry), '#!/bin/sh\n', { mode: 0o755 });
  const twoWays: ServerRecipe = {
    kind: 'dev server',
    override: { variable: 'TEMPORAL_CLI_PATH', path: undefined },
    sources: [thingSource(cacheDir, 'thing-release', undefined, builds), second],
  };
  await expect(resolveServer(twoWays, { log: silentLog })).resolves.toEqual({
    kind: 'path',
    path: cachedExecutable(second.entry),
    source: 'cache',
  });
  expect(builds).toEqual([]);
});

test('resolve: when the preferred source fails the next one runs; when all fail, the SDK download is tried, with every failure', async () => {
  const cacheDir = path.join(emptyDir, 'recipe-fallback');
  const builds: string[] = [];
  const lines: string[] = [];
  const fallback: ServerRecipe = {
    kind: 'dev server',
    override: { variable: 'TEMPORAL_CLI_PATH', path: undefined },
    sources: [
      thingSource(cacheDir, 'thing-release', undefined, builds, 'the index answered HTTP 503'),
      thingSource(cacheDir, 'thing-built', undefined, builds),
    ],
  };
  await expect(resolveServer(fallback, { log: (line) => lines.push(line) })).resolves.toEqual({
    kind: 'path',
    path: path.join(cacheDir, 'thing-built', 'thing'),
    source: 'built',
  });
  expect(builds).toEqual(['thing-release', 'thing-built']);
  expect(lines).toContain('[durable-agent] dev server: thing-release failed: the index answered HTTP 503.');

  const nothingWorks: ServerRecipe = {
    kind: 'dev server',
    override: { variable: 'TEMPORAL_CLI_PATH', path: undefined },
    sources: [
      thingSource(path.join(emptyDir, 'recipe-all-fail'), 'thing-release', undefined, builds, 'HTTP 503.'),
      thingSource(path.join(emptyDir, 'recipe-all-fail'), 'thing-built', '`go` was not found on PATH.', builds),
    ],
  };
  // Then Temporal's own download is the last resort, whose error (or the one without it) carries every failure.
  const reason = 'thing-release failed: HTTP 503. `go` was not found on PATH.';
  await expect(resolveServer(nothingWorks, { log: silentLog })).resolves.toEqual({ kind: 'sdk-download', reason });
  await expect(ensureServer(nothingWorks, { log: silentLog, sdkDownload: false })).rejects.toThrow(
    `Cannot provision the Temporal dev server: ${reason}`,
  );
  const onlyFailures: ServerRecipe = { ...nothingWorks, sources: nothingWorks.sources.slice(0, 1) };
  await expect(resolveServer(onlyFailures, { log: silentLog })).resolves.toEqual({
    kind: 'sdk-download',
    reason: 'thing-release failed: HTTP 503. Or set TEMPORAL_CLI_PATH.',
  });
  // A failed attempt leaves neither a half entry nor its lock behind.
  await expect(fs.readdir(path.join(emptyDir, 'recipe-all-fail'))).resolves.toEqual([]);
});
