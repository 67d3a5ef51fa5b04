import { readFileSync } from 'node:fs';

let version: string | undefined;

/**
 * This package's version, from its package.json (read once). The path is relative to this module, which sits two
 * levels below the package root both as source (src/shared/) and as built code (dist/shared/).
 */
export function packageVersion(): string {
  if (version === undefined) {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    version = manifest.version;
  }
  return version;
}
