import path from 'node:path';
import { cachedExecutablePath, installIntoCache, isExecutable, type CacheEntry } from './cache.js';
import { ServerUnavailableError } from './errors.js';
import { Progress, stderrLog, type ProgressLog } from './progress.js';
import type { ProvisionedServer, ServerKind } from './provisioned-server.js';
import { downloadWithSdk } from './sdk-download.js';

export interface ProvisionOptions {
  /** Receives the step-by-step progress report; default: lines on stderr. */
  log?: ProgressLog;
  /** `ensure…` only: try @temporalio/testing's own download when nothing local works; default true. */
  sdkDownload?: boolean;
}

/** What differs between the dev server and the test server; the order in which they are looked for is the same. */
export interface ServerRecipe {
  kind: ServerKind;
  /** The variable that names an existing executable (`TEMPORAL_CLI_PATH`, …) and its value, if set. */
  override: { variable: string; path: string | undefined };
  /** Where the executable lives in the cache, whether or not it has been built yet. */
  entry: CacheEntry;
  /** What this machine lacks to build the server, with what to install; undefined when it can build. */
  missingBuildTools(): Promise<string | undefined>;
  /** Said once before a build starts: what it builds, where, and that it takes a while. */
  buildDescription: string;
  /** Builds the server into the staging directory, which becomes the cache entry once complete. */
  build(stagingDir: string, progress: Progress): Promise<void>;
}

/**
 * Finds a server: the override variable, then the cache, then a build when the build tools are installed. Without them
 * it answers `sdk-download`, leaving the download to @temporalio/testing, which works only on machines that reach
 * Temporal's download site.
 */
export async function resolveServer(recipe: ServerRecipe, options: ProvisionOptions = {}): Promise<ProvisionedServer> {
  const { override, entry } = recipe;
  if (override.path !== undefined) {
    const file = path.resolve(override.path);
    if (!(await isExecutable(file))) {
      throw new ServerUnavailableError(`${override.variable}=${override.path} is not an executable file.`);
    }
    return { kind: 'path', path: file, source: 'environment' };
  }
  const cached = cachedExecutablePath(entry);
  if (await isExecutable(cached)) return { kind: 'path', path: cached, source: 'cache' };
  const missing = await recipe.missingBuildTools();
  if (missing !== undefined) return { kind: 'sdk-download', reason: missing };
  const progress = new Progress(recipe.kind, options.log ?? stderrLog);
  progress.info(recipe.buildDescription);
  const built = await installIntoCache(entry, progress, (stagingDir) => recipe.build(stagingDir, progress));
  progress.finished(`ready: ${built}`);
  return { kind: 'path', path: built, source: 'built' };
}

/**
 * Like {@link resolveServer}, for callers that run the binary themselves: when nothing local can provide it, the
 * SDK's own download is tried here, and if that fails too the error says what to install.
 */
export async function ensureServer(recipe: ServerRecipe, options: ProvisionOptions = {}): Promise<string> {
  const server = await resolveServer(recipe, options);
  if (server.kind === 'path') return server.path;
  if (options.sdkDownload === false) {
    throw new ServerUnavailableError(`Cannot provision the Temporal ${recipe.kind}: ${server.reason}`);
  }
  const progress = new Progress(recipe.kind, options.log ?? stderrLog);
  return await downloadWithSdk(recipe.entry.cacheDir, recipe.kind, server.reason, progress);
}
