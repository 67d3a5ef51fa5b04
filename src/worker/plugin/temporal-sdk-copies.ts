import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { DurableAgentError } from '../../shared/errors.js';

/**
 * The Temporal SDK versions durable-agent supports: the range of its `@temporalio/*` peer dependencies (package.json
 * says the same; test/package-manifest.test.ts keeps the two equal).
 */
export const SUPPORTED_TEMPORAL_SDK = '~1.24.0';

/** A package directory `@temporalio/<name>` inside a node_modules, and the file path that follows it. */
const TEMPORAL_PACKAGE = /^(.*[\\/]node_modules[\\/]@temporalio[\\/][^\\/]+)[\\/]/;

/** One copy of an `@temporalio/*` package: where it is loaded from and its version. */
export interface TemporalPackageCopy {
  directory: string;
  version: string;
}

/**
 * Two copies of an `@temporalio/*` package in one process: the application's and the one durable-agent resolved. The
 * copies do not mix: a connection or a Runtime made by one copy's native bridge crashes the other's in Rust ("there is
 * no reactor running, must be called from the context of a Tokio 1.x runtime"), and its failures and payloads fail the
 * other's `instanceof` checks.
 */
export class DuplicateTemporalSdkError extends DurableAgentError {
  constructor(
    /** The package loaded twice (the first found: `@temporalio/core-bridge` when it is among them). */
    readonly packageName: string,
    /** Its copies, each with its directory and version. */
    readonly copies: readonly TemporalPackageCopy[],
  ) {
    super(
      `Two copies of ${packageName} are loaded in this process: ` +
        `${copies.map((copy) => `${copy.directory} (${copy.version})`).join(' and ')}. ` +
        "durable-agent uses the application's Temporal SDK (its @temporalio/* packages are peer dependencies, " +
        `${SUPPORTED_TEMPORAL_SDK}), and objects of one copy crash the other. ` +
        'Install durable-agent as a package, not a link (from the registry or a tarball; for a `file:` path, ' +
        '`install-links=true` in .npmrc), with the same @temporalio/* versions as the application; ' +
        `\`npm ls ${packageName}\` then lists one copy (\`npm dedupe\` merges copies of the same version).`,
    );
  }
}

/**
 * The `@temporalio/*` packages loaded from more than one directory, among the given module file paths (by default the
 * CommonJS modules this process has loaded, which include every `@temporalio/*` file: the SDK is CommonJS). Paths in
 * the module cache are real paths, so a symlinked package counts once.
 */
export function duplicateTemporalPackages(
  modulePaths: Iterable<string> = Object.keys(createRequire(import.meta.url).cache),
): Map<string, TemporalPackageCopy[]> {
  const directories = new Map<string, Set<string>>();
  for (const file of modulePaths) {
    const directory = TEMPORAL_PACKAGE.exec(file)?.[1];
    if (directory === undefined) continue;
    const name = `@temporalio/${path.basename(directory)}`;
    directories.set(name, (directories.get(name) ?? new Set()).add(directory));
  }
  const duplicates = new Map<string, TemporalPackageCopy[]>();
  for (const [name, found] of directories) {
    if (found.size < 2) continue;
    const copies = [...found].sort().map((directory) => ({ directory, version: version(directory) }));
    duplicates.set(name, copies);
  }
  return duplicates;
}

/**
 * Throws {@link DuplicateTemporalSdkError} when this process has loaded two copies of a Temporal SDK package: checked
 * when a worker starts, before the copies meet in native code, where the failure names neither.
 */
export function assertOneTemporalSdk(modulePaths?: Iterable<string>): void {
  const duplicates = duplicateTemporalPackages(modulePaths);
  if (duplicates.size === 0) return;
  const name = duplicates.has('@temporalio/core-bridge') ? '@temporalio/core-bridge' : [...duplicates.keys()][0]!;
  throw new DuplicateTemporalSdkError(name, duplicates.get(name)!);
}

/** The version a package directory's manifest names, for the message; a copy without one is still a copy. */
function version(directory: string): string {
  try {
    const manifest = JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')) as { version?: string };
    return manifest.version ?? 'version unknown';
  } catch {
    return 'version unknown';
  }
}
