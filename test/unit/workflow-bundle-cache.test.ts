import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedWorkflowBundle } from '../../src/worker/workflow-bundle-cache.js';

/**
 * A workflow package of its own in a temporary folder (its node_modules is this project's), bundled through the cache
 * with the real bundler: each test changes one input and expects a bundle of the new code, never the kept one.
 */
const folder = mkdtempSync(path.join(os.tmpdir(), 'workflow-bundle-cache-'));
const cacheDirectory = path.join(folder, 'cache');
const workflowsPath = path.join(folder, 'workflows.ts');
symlinkSync(fileURLToPath(new URL('../../node_modules', import.meta.url)), path.join(folder, 'node_modules'), 'dir');
writeFileSync(
  workflowsPath,
  "import { greeting } from './greeting';\nexport async function greet(): Promise<string> {\n  return greeting;\n}\n",
);
writeFileSync(path.join(folder, 'greeting.js'), "exports.greeting = 'hello from greeting.js';\n");

beforeAll(waitPastModificationTime);
afterAll(() => rmSync(folder, { recursive: true, force: true }));

let builds = 0;
const silent = { trace() {}, debug() {}, info() {}, log() {}, warn() {}, error() {} };

async function bundle(options: Record<string, unknown> = { workflowsPath }) {
  return await cachedWorkflowBundle(cacheDirectory, options, async (extra) => {
    builds += 1;
    return await bundleWorkflowCode({ workflowsPath, logger: silent, ...extra });
  });
}

/** Write an input after a bundle was kept, and bundle again: expected to build anew. */
async function bundleAfterWriting(name: string, content: string) {
  await bundle();
  writeFileSync(path.join(folder, name), content);
  await waitPastModificationTime();
  const buildsBefore = builds;
  const rebuilt = await bundle();
  expect(builds).toBe(buildsBefore + 1);
  return rebuilt;
}

describe('workflow bundle cache', { timeout: 120_000 }, () => {
  it('keeps a bundle: the next process gets the same code without bundling', async () => {
    const first = await bundle();
    expect(first.code).toContain('hello from greeting.js');
    expect(readdirSync(cacheDirectory).filter((name) => name.endsWith('.json'))).toHaveLength(1);
    const buildsBefore = builds;
    const second = await bundle();
    expect(builds).toBe(buildsBefore);
    expect(second.code).toBe(first.code);
  });

  it('changed content: an imported module edited since is bundled anew', async () => {
    const edited = await bundleAfterWriting('greeting.js', "exports.greeting = 'edited greeting.js';\n");
    expect(edited.code).toContain('edited greeting.js');
    expect(edited.code).not.toContain('hello from greeting.js');
    // And the new bundle is the one kept.
    const buildsAfter = builds;
    await bundle();
    expect(builds).toBe(buildsAfter);
  });

  it('changed resolution: a new file the import now resolves to (greeting.ts before greeting.js) is bundled anew', async () => {
    const shadowed = await bundleAfterWriting('greeting.ts', "export const greeting = 'from greeting.ts';\n");
    expect(shadowed.code).toContain('from greeting.ts');
  });

  it('other options are another entry, and an unreadable entry is bundled anew instead of failing', async () => {
    await bundle();
    const buildsBefore = builds;
    await bundle({ workflowsPath, variant: 'another' });
    expect(builds).toBe(buildsBefore + 1);
    for (const name of readdirSync(cacheDirectory)) writeFileSync(path.join(cacheDirectory, name), '{"code": 1');
    const rebuilt = await bundle();
    expect(builds).toBe(buildsBefore + 2);
    expect(rebuilt.code).toContain('from greeting.ts');
  });
});

/** A bundle is kept only when its inputs are older than its start by the filesystem's time resolution: wait that out. */
async function waitPastModificationTime() {
  await new Promise((resolve) => setTimeout(resolve, 2_100));
}
