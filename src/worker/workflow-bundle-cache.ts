import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { BundleOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';

/**
 * Workflow bundles kept on disk between processes. Bundling takes seconds of CPU at every worker start; a kept bundle
 * is used only when every file webpack read to build it still has the content it had, and every path webpack probed
 * and found absent (a resolution that a new file would change) is still absent. The entry names the bundler's
 * version and options in its key, which covers what webpack generated in memory (the entry point, its runtime).
 */

/** What one kept bundle records: each input path's SHA-256, or `null` for a path that must stay absent. */
interface KeptBundle {
  inputs: Record<string, string | null>;
  code: string;
}

/** A webpack plugin, typed by the one hook it uses (the SDK's `Configuration` type is webpack's own). */
interface InputRecorder {
  apply(compiler: {
    hooks: {
      afterCompile: {
        tap(name: string, callback: (compilation: InputLists) => void): void;
      };
    };
  }): void;
}

interface InputLists {
  fileDependencies: Iterable<string>;
  missingDependencies: Iterable<string>;
  contextDependencies: Iterable<string>;
}

type BundleBuilder = (options: Pick<BundleOptions, 'webpackConfigHook'>) => Promise<WorkflowBundleWithSourceMap>;

const bundlerVersion = (createRequire(import.meta.url)('@temporalio/worker/package.json') as { version: string })
  .version;

/**
 * The bundle `build` makes for `options`, from `directory` when a kept one's inputs are unchanged; otherwise built and
 * kept there. A cache that cannot be read or written costs only the bundling: the worker still gets its bundle.
 */
export async function cachedWorkflowBundle(
  directory: string,
  options: Record<string, unknown>,
  build: BundleBuilder,
): Promise<WorkflowBundleWithSourceMap> {
  const file = path.join(directory, `${sha256(JSON.stringify({ bundlerVersion, ...options })).slice(0, 32)}.json`);
  const kept = readKept(file);
  if (kept !== undefined && inputsUnchanged(kept.inputs)) return { code: kept.code, sourceMap: '' };

  // Files written during bundling may differ from what webpack read: such a bundle is used but not kept.
  const startedAt = Date.now() - MTIME_RESOLUTION_MS;
  let inputs: InputLists | undefined;
  const recorder: InputRecorder = {
    apply: (compiler) =>
      compiler.hooks.afterCompile.tap('durable-agent bundle inputs', (compilation) => (inputs = compilation)),
  };
  const bundle = await build({
    webpackConfigHook: (config) => ({ ...config, plugins: [...(config.plugins ?? []), recorder] }),
  });
  const recorded = inputs === undefined ? undefined : recordInputs(inputs, startedAt);
  if (recorded !== undefined) writeKept(directory, file, { inputs: recorded, code: bundle.code });
  return bundle;
}

/** Some filesystems keep modification times to the second (or two, FAT). */
const MTIME_RESOLUTION_MS = 2_000;

function readKept(file: string): KeptBundle | undefined {
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Partial<KeptBundle>;
    return typeof kept.code === 'string' && typeof kept.inputs === 'object' && kept.inputs !== null
      ? (kept as KeptBundle)
      : undefined;
  } catch {
    return undefined;
  }
}

function inputsUnchanged(inputs: KeptBundle['inputs']): boolean {
  return Object.entries(inputs).every(([input, digest]) => contentDigest(input) === digest);
}

/** The inputs' digests, or `undefined` when they cannot vouch for the bundle (changed meanwhile, or a directory). */
function recordInputs(lists: InputLists, startedAt: number): KeptBundle['inputs'] | undefined {
  // A directory's listing (require.context) is an input this record does not hash.
  if ([...lists.contextDependencies].length > 0) return undefined;
  const inputs: KeptBundle['inputs'] = {};
  for (const file of lists.fileDependencies) {
    const modified = modifiedAt(file);
    if (modified !== undefined && modified >= startedAt) return undefined;
    const digest = contentDigest(file);
    if (digest === undefined) return undefined;
    // Absent from disk (null): the entry point the bundler generates in memory, which the key's options determine.
    inputs[file] = digest;
  }
  for (const probed of lists.missingDependencies) {
    if (probed in inputs) continue;
    if (contentDigest(probed) !== null) return undefined;
    inputs[probed] = null;
  }
  return inputs;
}

/** A file's modification time; none for a directory (whose presence is what counts) or a path with nothing there. */
function modifiedAt(file: string): number | undefined {
  try {
    const stats = statSync(file);
    return stats.isDirectory() ? undefined : stats.mtimeMs;
  } catch {
    return undefined;
  }
}

/**
 * The file's SHA-256, `null` when nothing is there, `directory` for a directory (its presence is what counts), and
 * `undefined` when it cannot be read (it then vouches for nothing).
 */
function contentDigest(input: string): string | null | undefined {
  try {
    return sha256(readFileSync(input));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EISDIR') return 'directory';
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    return undefined;
  }
}

function writeKept(directory: string, file: string, kept: KeptBundle): void {
  // Written aside and renamed: a process reading the entry never sees half of it.
  const partial = `${file}.${randomUUID()}.partial`;
  try {
    mkdirSync(directory, { recursive: true });
    writeFileSync(partial, JSON.stringify(kept));
    renameSync(partial, file);
  } catch {
    rmSync(partial, { force: true });
  }
}

function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}
