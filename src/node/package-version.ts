import { existsSync, readFileSync } from 'node:fs';

let version: string | undefined;

/**
 * This package's version, from its package.json (read once): the nearest one above this module that names the package.
 * The module sits at src/shared/ as source and dist/shared/ when built, but deeper when another build compiles the
 * sources (the benchmark's bench/dist/src/shared/), so the manifest is looked for rather than assumed two levels up.
 */
export function packageVersion(): string {
  if (version === undefined) {
    for (let directory = new URL('.', import.meta.url); ; directory = new URL('..', directory)) {
      const candidate = new URL('package.json', directory);
      if (existsSync(candidate)) {
        const manifest = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
        if (manifest.name === 'durable-agent' && manifest.version !== undefined) {
          version = manifest.version;
          break;
        }
      }
      if (directory.pathname === '/') throw new Error(`No package.json of durable-agent above ${import.meta.url}.`);
    }
  }
  return version;
}
