import { existsSync, readFileSync } from 'node:fs';
import { chmod, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { installIntoCache } from '../../src/temporal-servers/cache.js';
import { Progress, stderrLog } from '../../src/temporal-servers/progress.js';
import { CommandFailedError, runCommand } from '../../src/temporal-servers/run-command.js';
import { REPO_ROOT } from './helpers.js';

/**
 * The workers of earlier releases, built from their recorded commits (releases.json) for the in-place upgrade run.
 * Clones and mirrors drop tags, so a release is found by its commit. Each build is cached in the project's cache
 * directory (`DURABLE_AGENT_CACHE_DIR`, default ~/.cache/durable-agent) as `release-<commit>`, so only the first run
 * pays for it.
 */

export interface Release {
  /** `0.1.0`, or `commit <short hash>` for a commit named by DURABLE_AGENT_UPGRADE_FROM. */
  version: string;
  commit: string;
}

/**
 * The releases to upgrade from: every entry of releases.json. `DURABLE_AGENT_UPGRADE_FROM=<commit>[,<commit>...]`
 * replaces them with other commits, e.g. one whose histories are known not to replay on today's code, to see the run
 * fail (never in CI: it is a check of the check).
 */
export function releasesToUpgradeFrom(environment: NodeJS.ProcessEnv = process.env): Release[] {
  const override = environment.DURABLE_AGENT_UPGRADE_FROM?.trim();
  if (override) {
    return override.split(',').map((commit) => {
      if (!/^[0-9a-f]{7,40}$/i.test(commit.trim())) {
        throw new Error(
          `DURABLE_AGENT_UPGRADE_FROM: "${commit}" is not a commit hash; give 7 to 40 hex digits, comma-separated.`,
        );
      }
      return { version: `commit ${commit.trim().slice(0, 7)}`, commit: commit.trim() };
    });
  }
  const file = path.join(REPO_ROOT, 'releases.json');
  const { releases } = JSON.parse(readFileSync(file, 'utf8')) as { releases?: Release[] };
  if (!Array.isArray(releases) || releases.length === 0) {
    throw new Error(`${file} lists no releases: it needs "releases": [{ "version": "...", "commit": "..." }].`);
  }
  return releases.map(({ version, commit }) => ({ version, commit }));
}

/** The full hash of `commit`, with a clear error when this clone lacks it (a shallow clone, say). */
async function resolveCommit(commit: string): Promise<string> {
  try {
    return (await runCommand('git', ['rev-parse', '--verify', `${commit}^{commit}`], { cwd: REPO_ROOT })).trim();
  } catch (error) {
    throw new Error(
      `Commit ${commit} is not in this clone's history, so its release cannot be built. A shallow clone lacks it: ` +
        'run `git fetch --unshallow` (or clone without --depth).',
      { cause: error },
    );
  }
}

/**
 * The release's dependencies. The same lock file as this tree's means the same packages: hard links to this tree's
 * node_modules cost nothing. Otherwise `npm ci` from the local npm cache first; npm ci refuses a lock file that lacks
 * optional platform packages even when this platform needs none of them, and `npm install --no-save` then installs the
 * locked versions of everything else (as .ci/run does).
 */
async function installDependencies(directory: string, progress: Progress): Promise<void> {
  const lockFile = 'package-lock.json';
  const sameLock =
    existsSync(path.join(REPO_ROOT, 'node_modules')) &&
    (await readFile(path.join(directory, lockFile), 'utf8')) ===
      (await readFile(path.join(REPO_ROOT, lockFile), 'utf8'));
  if (sameLock) {
    try {
      await progress.step('cp -al node_modules (the same package-lock.json as this tree)', () =>
        runCommand('cp', ['-al', path.join(REPO_ROOT, 'node_modules'), path.join(directory, 'node_modules')]),
      );
      return;
    } catch (error) {
      // Hard links cannot cross file systems (a cache directory on another disk): install instead.
      progress.info(`hard links failed, installing instead: ${(error as Error).message.split('\n')[0]}`);
      await rm(path.join(directory, 'node_modules'), { recursive: true, force: true });
    }
  }
  const quiet = ['--prefer-offline', '--no-audit', '--no-fund'];
  try {
    await progress.step('npm ci', () => runCommand('npm', ['ci', ...quiet], { cwd: directory }));
  } catch (error) {
    if (!(error instanceof CommandFailedError)) throw error;
    progress.info(`npm ci refused the lock file; npm install --no-save instead: ${error.message.split('\n')[0]}`);
    await progress.step('npm install --no-save', () =>
      runCommand('npm', ['install', '--no-save', ...quiet], { cwd: directory }),
    );
  }
}

/**
 * Builds the release's worker from its commit (git archive, its dependencies, its own `npm run build`) into the cache,
 * once, and returns the directory: `<dir>/dist/cli/index.js` is its CLI. The cache's staging directory is the only
 * temporary directory, removed whatever happens.
 */
export async function buildRelease(release: Release): Promise<string> {
  const commit = await resolveCommit(release.commit);
  const cacheDir = loadConfig().cacheDir;
  const name = `release-${commit}`;
  const progress = new Progress(`release ${release.version} (${commit.slice(0, 7)})`, stderrLog);
  // The CLI is made executable as `npm install` makes a package's bin, so the cache's completeness check finds it.
  const executable = 'dist/cli/index.js';
  await installIntoCache({ cacheDir, name, executable }, progress, async (staging) => {
    const archive = path.join(staging, 'release.tar');
    await progress.step(`git archive ${commit.slice(0, 7)}`, async () => {
      await runCommand('git', ['archive', '--format=tar', '-o', archive, commit], { cwd: REPO_ROOT });
      await runCommand('tar', ['-xf', archive, '-C', staging]);
      await rm(archive);
    });
    await installDependencies(staging, progress);
    await progress.step('npm run build', () => runCommand('npm', ['run', 'build'], { cwd: staging }));
    await chmod(path.join(staging, executable), 0o755);
  });
  return path.join(cacheDir, name);
}
