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
 * What only some paths use, loaded on first use (src/worker/activities/model/provider-sdks.ts, src/client/telemetry/tracing.ts and
 * the telemetry modules beside it, src/worker/pricing/price-table.ts): the provider SDKs, the tracer provider, its exporters
 * and Temporal's interceptors for it, the price table. Every process importing the package would pay for them.
 */
const LOADED_ON_FIRST_USE = [
  '@anthropic-ai/sdk',
  'openai',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/exporter-trace-otlp-proto',
  '@temporalio/interceptors-opentelemetry',
  '@pydantic/genai-prices',
];

const loadedBy = new Map<string, string[]>();

/**
 * The packages a fresh Node process loads to import `specifier` from the built package: the ES modules its loader
 * hooks see and the CommonJS modules in its require cache.
 */
function packagesLoadedBy(specifier: string): string[] {
  const known = loadedBy.get(specifier);
  if (known !== undefined) return known;
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
  loadedBy.set(specifier, [...packages].sort());
  return loadedBy.get(specifier)!;
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

  it('durable-agent: a client-only import loads no zod (src/client/output-format.ts loads it for a zod schema)', () => {
    expect(packagesLoadedBy('durable-agent')).not.toContain('zod');
  });

  it.each(['durable-agent', 'durable-agent/worker', 'durable-agent/testing'])(
    '%s loads neither provider SDK, nor the tracer provider and its exporters, nor the price table until used',
    (specifier) => {
      const loaded = packagesLoadedBy(specifier);
      expect(loaded).toContain('@temporalio/client');
      expect(loaded.filter((name) => LOADED_ON_FIRST_USE.includes(name))).toEqual([]);
    },
  );
});
