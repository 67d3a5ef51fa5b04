import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SUPPORTED_TEMPORAL_SDK } from '../src/worker/plugin/temporal-sdk-copies.js';

/**
 * What package.json promises an installer (issue 42): the application's Temporal SDK is the one durable-agent uses, and
 * `npm install` on npm 11 lists no install script left undecided.
 */

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
}

const read = <T>(file: string) => JSON.parse(readFileSync(new URL(file, import.meta.url), 'utf8')) as T;
const manifest = read<Manifest>('../package.json');
const example = read<Manifest>('../examples/embedded/package.json');
const lock = read<{ packages: Record<string, { hasInstallScript?: boolean }> }>('../package-lock.json');
const temporal = (dependencies: Record<string, string> = {}) =>
  Object.keys(dependencies).filter((name) => name.startsWith('@temporalio/'));

describe('package.json', () => {
  it('takes every @temporalio package as a peer dependency of the supported range, never as its own dependency', () => {
    // A copy of its own beside the application's crashed the worker in Rust (examples/embedded, another patch version).
    expect(temporal(manifest.dependencies)).toEqual([]);
    const peers = temporal(manifest.peerDependencies);
    expect(peers).toEqual(expect.arrayContaining(['@temporalio/client', '@temporalio/worker', '@temporalio/workflow']));
    for (const name of peers) expect(manifest.peerDependencies?.[name], name).toBe(SUPPORTED_TEMPORAL_SDK);
    // The SDK's protobufjs too: a peer takes the top of node_modules, so the SDK shares one copy (docs/replay.md).
    expect(manifest.dependencies).not.toHaveProperty('protobufjs');
    expect(manifest.peerDependencies).toHaveProperty('protobufjs');
  });

  it('decides every install script in its lockfile in allowScripts, so npm 11 warns of none', () => {
    const withScripts = Object.entries(lock.packages)
      .filter(([location, entry]) => location !== '' && entry.hasInstallScript === true)
      .map(([location]) => location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts.length).toBeGreaterThan(0);
    for (const name of new Set(withScripts)) expect(manifest.allowScripts, name).toHaveProperty([name]);
  });

  it('the embedded example decides the same install scripts, and copies in durable-agent as built', () => {
    expect(example.allowScripts).toEqual(manifest.allowScripts);
    // A symlink to the checkout would resolve the SDK from the checkout's node_modules; its `prepare` is not run.
    expect(example.dependencies?.['durable-agent']).toBe('file:../..');
    const npmrc = readFileSync(new URL('../examples/embedded/.npmrc', import.meta.url), 'utf8');
    expect(npmrc).toMatch(/^install-links=true$/m);
    expect(npmrc).toMatch(/^ignore-scripts=true$/m);
    // Its SDK packages are the application's, in the range durable-agent supports.
    for (const name of [...temporal(example.dependencies), ...temporal(example.devDependencies)]) {
      expect(manifest.peerDependencies, name).toHaveProperty([name]);
    }
  });
});
