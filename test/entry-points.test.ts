import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const repository = fileURLToPath(new URL('..', import.meta.url));
const recorder = fileURLToPath(new URL('./helpers/load-recorder.mjs', import.meta.url));
const scratch = mkdtempSync(path.join(os.tmpdir(), 'entry-points-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Worker-side packages, and the testing kit's MCP server SDK: a backend importing only the client loads none. */
const WORKER_PACKAGES = [
  '@temporalio/worker',
  '@modelcontextprotocol/client',
  '@modelcontextprotocol/server',
  'hono',
  '@hono/node-server',
  'jose',
];

/**
 * The packages a fresh Node process loads to import `specifier` from the built package: the ES modules its loader
 * hooks see and the CommonJS modules in its require cache.
 */
function packagesLoadedBy(specifier: string): string[] {
  const record = path.join(scratch, `${specifier.replaceAll('/', '_')}.txt`);
  const script =
    `import { createRequire } from 'node:module';\n` +
    `import { appendFileSync } from 'node:fs';\n` +
    `await import(${JSON.stringify(specifier)});\n` +
    `const cached = Object.keys(createRequire(import.meta.url).cache);\n` +
    `appendFileSync(process.env.LOAD_RECORD_FILE, cached.join('\\n') + '\\n');\n`;
  execFileSync(process.execPath, ['--import', recorder, '--input-type=module', '--eval', script], {
    cwd: repository,
    env: { ...process.env, LOAD_RECORD_FILE: record },
  });
  const packages = new Set<string>();
  for (const line of readFileSync(record, 'utf8').split('\n')) {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(line);
    if (match) packages.add(match[1]!);
  }
  return [...packages].sort();
}

describe('entry points by role', () => {
  it('durable-agent: a client-only import loads no worker code (no Temporal worker, MCP SDK, hono or jose)', () => {
    const loaded = packagesLoadedBy('durable-agent');
    expect(loaded).toContain('@temporalio/client');
    expect(loaded.filter((name) => WORKER_PACKAGES.includes(name))).toEqual([]);
  });

  it('durable-agent/worker loads the Temporal worker and the MCP client (what the root import leaves out)', () => {
    const loaded = packagesLoadedBy('durable-agent/worker');
    expect(loaded).toEqual(expect.arrayContaining(['@temporalio/worker', '@modelcontextprotocol/client']));
  });
});
