import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import type { WorkerOptions } from '@temporalio/worker';
import type { WorkerVersioningConfig } from '../config/index.js';
import { packageVersion } from '../node/package-version.js';

/** The package's root: this module is src/worker/versioning.ts as source and dist/worker/versioning.js once built. */
const packageRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The commit of the git checkout this package runs from, or undefined: not a checkout (an npm install, a Docker image
 * without `.git`), no `git` on PATH, or a checkout of another project that merely holds this package (node_modules).
 */
export function gitCommit(directory = packageRoot): string | undefined {
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: directory, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 })
      .toString()
      .trim();
  try {
    if (realpathSync(git('rev-parse', '--show-toplevel')) !== realpathSync(directory)) return undefined;
    const commit = git('rev-parse', 'HEAD');
    return /^[0-9a-f]{40,64}$/.test(commit) ? commit : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The build id a versioned worker runs as when `DURABLE_AGENT_BUILD_ID` is unset: the package version, plus the first
 * 12 hex digits of the git commit when it runs from a checkout (`0.2.0+1a2b3c4d5e6f`), so two commits of one release
 * are two versions. Never fails: without git it is the package version alone.
 */
export function defaultBuildId(commit: string | undefined): string {
  const version = packageVersion();
  return commit === undefined ? version : `${version}+${commit.slice(0, 12)}`;
}

/** The Worker Deployment Version a worker with `versioning` runs as, its build id defaulted. */
export function deploymentVersion(versioning: WorkerVersioningConfig): WorkerDeploymentVersion {
  return { deploymentName: versioning.deploymentName, buildId: versioning.buildId ?? defaultBuildId(gitCommit()) };
}

/**
 * Worker options for a Worker Deployment Version. Conversations are pinned: a run stays on the version that started
 * it, so a turn in flight or an approval waiting for days finishes on the code that began it; the conversation moves
 * to the current version when it continues as new between turns (see conversation.ts).
 */
export function workerDeploymentOptions(
  version: WorkerDeploymentVersion,
): Pick<WorkerOptions, 'workerDeploymentOptions'> {
  return { workerDeploymentOptions: { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' } };
}

/** How version strings read in visibility (`TemporalWorkerDeploymentVersion`) and in the `temporal` CLI. */
export function versionString(version: WorkerDeploymentVersion): string {
  return `${version.deploymentName}:${version.buildId}`;
}
