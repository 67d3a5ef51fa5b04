import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { installIntoCache } from '../../src/temporal-servers/cache.js';
import { Progress } from '../../src/temporal-servers/progress.js';

let cacheDir: string;
const lines: string[] = [];
const progress = new Progress('test entry', (line) => lines.push(line));
const entry = () => ({ cacheDir, name: 'thing-1.0.0', executable: 'thing' });

async function writeExecutable(stagingDir: string): Promise<void> {
  await fs.writeFile(path.join(stagingDir, 'thing'), '#!/bin/sh\n', { mode: 0o755 });
}

beforeEach(async () => {
  cacheDir = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-cache-test-'));
  lines.length = 0;
});

afterEach(async () => {
  await fs.rm(cacheDir, { recursive: true, force: true });
});

test('cache: two provisioners at once build once and both get the same executable', async () => {
  let builds = 0;
  const build = async (stagingDir: string) => {
    builds++;
    await new Promise((resolve) => setTimeout(resolve, 300));
    await writeExecutable(stagingDir);
  };
  const [first, second] = await Promise.all([
    installIntoCache(entry(), progress, build),
    installIntoCache(entry(), progress, build),
  ]);
  expect(builds).toBe(1);
  expect(first).toBe(path.join(cacheDir, 'thing-1.0.0', 'thing'));
  expect(second).toBe(first);
  expect(lines.some((line) => line.includes('waiting for process'))).toBe(true);
  expect((await fs.readdir(cacheDir)).sort()).toEqual(['thing-1.0.0']);
});

test('cache: a failed build leaves no entry and no staging directory, and the next call builds again', async () => {
  const failing = async (stagingDir: string) => {
    await fs.writeFile(path.join(stagingDir, 'half-written'), 'x');
    throw new Error('compiler crashed');
  };
  await expect(installIntoCache(entry(), progress, failing)).rejects.toThrow('compiler crashed');
  expect(await fs.readdir(cacheDir)).toEqual([]);
  await expect(installIntoCache(entry(), progress, writeExecutable)).resolves.toMatch(/thing$/);
});

test('cache: the lock and staging directory of a killed build are taken over', async () => {
  // A process that has exited stands in for a build killed mid-way.
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid;
  await fs.writeFile(
    path.join(cacheDir, 'thing-1.0.0.lock'),
    JSON.stringify({ pid: deadPid, hostname: os.hostname(), startedAt: Date.now() }),
  );
  await fs.mkdir(path.join(cacheDir, '.thing-1.0.0.staging-dead'));
  await installIntoCache(entry(), progress, writeExecutable);
  expect((await fs.readdir(cacheDir)).sort()).toEqual(['thing-1.0.0']);
  expect(lines.some((line) => line.includes(`stale lock of process ${deadPid}`))).toBe(true);
});
