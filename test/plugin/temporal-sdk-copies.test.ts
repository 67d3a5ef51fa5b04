import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import '@temporalio/worker';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuplicateTemporalSdkError, durableAgentPlugin } from '../../src/worker/index.js';
import { duplicateTemporalPackages } from '../../src/worker/plugin/temporal-sdk-copies.js';

/**
 * Issue 42: an application whose `@temporalio/*` resolved to other copies than durable-agent's (a `file:` link to a
 * checkout, another patch version) died in Rust with "there is no reactor running" and named neither copy. A worker
 * now refuses to start and names both.
 */

const require = createRequire(import.meta.url);
const plugin = () => durableAgentPlugin({ openai: new OpenAI({ apiKey: 'test' }), defaultModel: 'scripted-model' });

describe('duplicateTemporalPackages', () => {
  it('finds a package loaded from two node_modules, nested ones included, and names each copy once', () => {
    const duplicates = duplicateTemporalPackages([
      '/app/node_modules/@temporalio/core-bridge/index.js',
      '/app/node_modules/@temporalio/core-bridge/lib/errors.js',
      '/app/node_modules/durable-agent/node_modules/@temporalio/core-bridge/index.js',
      '/app/node_modules/@temporalio/worker/lib/index.js',
      '/app/node_modules/@temporalio/worker/node_modules/semver/index.js',
      '/app/node_modules/openai/index.js',
    ]);
    expect([...duplicates.keys()]).toEqual(['@temporalio/core-bridge']);
    expect(duplicates.get('@temporalio/core-bridge')?.map((copy) => copy.directory)).toEqual([
      '/app/node_modules/@temporalio/core-bridge',
      '/app/node_modules/durable-agent/node_modules/@temporalio/core-bridge',
    ]);
  });

  it('finds nothing in this process, where every @temporalio package is the one in node_modules', () => {
    expect(duplicateTemporalPackages()).toEqual(new Map());
    // The check sees the SDK's modules at all: the worker's native bridge is among the loaded CommonJS modules.
    expect(Object.keys(require.cache).some((file) => /@temporalio[\\/]core-bridge[\\/]/.test(file))).toBe(true);
  });
});

describe('a worker with two copies of the Temporal SDK loaded', () => {
  let directory: string;
  let secondCopy: string;

  beforeAll(() => {
    // A second @temporalio/core-bridge, as a host application on another patch version (or a linked checkout) has.
    directory = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'durable-agent-sdk-copies-')));
    const bridge = path.join(directory, 'node_modules', '@temporalio', 'core-bridge');
    mkdirSync(bridge, { recursive: true });
    writeFileSync(
      path.join(bridge, 'package.json'),
      JSON.stringify({ name: '@temporalio/core-bridge', version: '1.24.1' }),
    );
    writeFileSync(path.join(bridge, 'index.js'), 'module.exports = {};\n');
    secondCopy = path.join(bridge, 'index.js');
    createRequire(path.join(directory, 'host.js'))('@temporalio/core-bridge');
  });

  afterAll(() => {
    // The files of this process run after this one (vitest's isolate: false): they must see one copy again.
    delete require.cache[secondCopy];
    rmSync(directory, { recursive: true, force: true });
  });

  it('refuses to start: DuplicateTemporalSdkError names both copies, their versions, and how to install one', () => {
    const error = (() => {
      try {
        plugin().configureWorker({ taskQueue: 'sdk-copies' });
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(DuplicateTemporalSdkError);
    const { packageName, copies, message } = error as DuplicateTemporalSdkError;
    expect(packageName).toBe('@temporalio/core-bridge');
    expect(copies).toEqual(
      expect.arrayContaining([
        { directory: path.dirname(secondCopy), version: '1.24.1' },
        { directory: path.dirname(realpathSync(require.resolve('@temporalio/core-bridge'))), version: '1.24.0' },
      ]),
    );
    expect(message).toContain(`${path.dirname(secondCopy)} (1.24.1)`);
    expect(message).toContain('peer dependencies, ~1.24.0');
    expect(message).toContain('install-links=true');
    expect(message).toContain('npm ls @temporalio/core-bridge');
  });

  it('a replay worker refuses too', () => {
    expect(() => plugin().configureReplayWorker({})).toThrow(DuplicateTemporalSdkError);
  });
});
