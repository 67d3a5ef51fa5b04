import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const execFileAsync = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/**
 * The benchmark installs bench/peer and bench/chart with `npm ci` on its first run. `npm ci` refuses a lock file that
 * lacks any optional platform package a dependency names (all of @swc/core's macOS and Windows builds, say), even on
 * a platform that needs none of them; bench/peer's once did, and a fresh clone's benchmark lost the peer. The check
 * runs on a copy of the two files with an empty cache and no network: only the lock file's agreement with
 * package.json is judged, and the directory's node_modules is left alone.
 */
describe("the lock files of the benchmark's own packages", () => {
  const scratch: string[] = [];
  afterAll(async () => {
    await Promise.all(scratch.map((directory) => rm(directory, { recursive: true, force: true })));
  });

  for (const directory of ['bench/peer', 'bench/chart']) {
    it(`npm ci accepts ${directory}/package-lock.json`, async () => {
      const copy = await mkdtemp(join(tmpdir(), 'bench-lock-'));
      scratch.push(copy);
      for (const file of ['package.json', 'package-lock.json']) {
        await copyFile(join(repo, directory, file), join(copy, file));
      }
      const args = ['ci', '--dry-run', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'];
      const outcome = await execFileAsync(npm, [...args, '--cache', join(copy, '.npm-cache')], { cwd: copy }).then(
        () => 'accepted',
        (error: Error & { stderr?: string }) => `refused:\n${error.stderr || error.message}`,
      );
      expect(outcome).toBe('accepted');
    });
  }
});
