import fs from 'node:fs/promises';
import path from 'node:path';
import { installIntoCache, isExecutable, makeWritable, type CacheEntry } from './cache.js';
import { goEnvironment } from './dev-server.js';
import { ServerUnavailableError } from './errors.js';
import { Progress, stderrLog, type ProgressLog } from './progress.js';
import { commandExists, runCommand } from './run-command.js';

/**
 * Temporal Server (the multi-service server of a production cluster, not the CLI's dev server), pinned: the version
 * docker-compose.yml's `temporalio/server` and `temporalio/admin-tools` images name (test/production-stack holds them
 * to it). scripts/production-stack.mjs runs this build.
 */
export const TEMPORAL_SERVER_VERSION = '1.31.0';

const SERVER_MODULE = 'go.temporal.io/server';

/** What the cache entry of the Temporal Server build holds. */
export interface TemporalServerBuild {
  /** `temporal-server`, built from `go.temporal.io/server/cmd/server`. */
  server: string;
  /** `temporal-sql-tool`, built from `go.temporal.io/server/cmd/tools/sql`. */
  sqlTool: string;
  /** The module's `schema/` folder (`postgresql/v12/temporal/versioned`, …), the layout of the admin-tools image. */
  schemaDir: string;
  /** The version built, {@link TEMPORAL_SERVER_VERSION}. */
  version: string;
}

/** Where the Temporal Server build lives in the cache, whether or not it has been built yet. */
export function temporalServerCacheEntry(config: { cacheDir: string }): CacheEntry {
  return {
    cacheDir: config.cacheDir,
    name: `temporal-server-${TEMPORAL_SERVER_VERSION}`,
    executable: 'temporal-server',
  };
}

function buildOf(directory: string): TemporalServerBuild {
  return {
    server: path.join(directory, 'temporal-server'),
    sqlTool: path.join(directory, 'temporal-sql-tool'),
    schemaDir: path.join(directory, 'schema'),
    version: TEMPORAL_SERVER_VERSION,
  };
}

/** The cached build, or undefined when it has not been built yet (nothing is built here). */
export async function findTemporalServer(config: { cacheDir: string }): Promise<TemporalServerBuild | undefined> {
  const entry = temporalServerCacheEntry(config);
  const build = buildOf(path.join(entry.cacheDir, entry.name));
  return (await isExecutable(build.server)) ? build : undefined;
}

export interface EnsureTemporalServerOptions {
  /** Receives the step-by-step progress report; default: lines on stderr. */
  log?: ProgressLog;
}

/**
 * Returns the Temporal Server build from the cache, building it first from the Go module proxy when missing (once per
 * version: minutes and about 1.5 GB of Go modules when cold). Without Go and without a cached build it throws a
 * {@link ServerUnavailableError} that says what to install.
 */
export async function ensureTemporalServer(
  config: { cacheDir: string },
  options: EnsureTemporalServerOptions = {},
): Promise<TemporalServerBuild> {
  const cached = await findTemporalServer(config);
  if (cached) return cached;
  if (!(await commandExists('go', ['version']))) {
    throw new ServerUnavailableError(
      `Temporal Server ${TEMPORAL_SERVER_VERSION} is not built yet and \`go\` was not found on PATH: install Go 1.26.2 ` +
        'or newer (https://go.dev/dl/) so it can be built from its Go module, once.',
    );
  }
  const entry = temporalServerCacheEntry(config);
  const progress = new Progress(`Temporal Server ${TEMPORAL_SERVER_VERSION}`, options.log ?? stderrLog);
  progress.info(
    `building it from source into ${entry.cacheDir} (once per version; the first build downloads about 1.5 GB of Go ` +
      'modules and compiles for minutes)',
  );
  const server = await installIntoCache(entry, progress, (stagingDir) => buildTemporalServer(stagingDir, progress));
  progress.finished(`ready: ${server}`);
  return buildOf(path.dirname(server));
}

async function buildTemporalServer(stagingDir: string, progress: Progress): Promise<void> {
  const environment = await goEnvironment();
  // An empty module of its own: `go get` settles every dependency at the versions the server's own go.mod names.
  const moduleDir = path.join(stagingDir, 'module');
  await fs.mkdir(moduleDir);
  const go = (args: string[]) => runCommand('go', args, { cwd: moduleDir, env: environment });
  await go(['mod', 'init', 'durable-agent.local/temporal-server']);
  await progress.step(`downloading Go module ${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}`, () =>
    go(['get', `${SERVER_MODULE}@v${TEMPORAL_SERVER_VERSION}`]),
  );
  const build = buildOf(stagingDir);
  await progress.step('compiling temporal-server (downloads its dependencies first; minutes when cold)', () =>
    go(['build', '-trimpath', '-ldflags', '-s -w', '-o', build.server, `${SERVER_MODULE}/cmd/server`]),
  );
  await progress.step('compiling temporal-sql-tool', () =>
    go(['build', '-trimpath', '-ldflags', '-s -w', '-o', build.sqlTool, `${SERVER_MODULE}/cmd/tools/sql`]),
  );
  await progress.step('copying the schema files', async () => {
    const moduleSource = (await go(['list', '-m', '-f', '{{.Dir}}', SERVER_MODULE])).trim();
    await fs.cp(path.join(moduleSource, 'schema'), build.schemaDir, { recursive: true });
    // Copies of the module cache are read-only; the cache entry must be removable like any other.
    await makeWritable(build.schemaDir);
  });
  await fs.rm(moduleDir, { recursive: true, force: true });
}
