import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/index.js';

/**
 * Runs the MCP conformance suite's client scenarios against test/conformance/client.mjs (durable-agent through its
 * public API). Both published versions of the suite are devDependencies under aliases (`conformance-016`,
 * `conformance-020`). The suite needs Node 22 or later; an older test runner provisions the official Node build from
 * the npm registry (`node-<platform>-<arch>`) into the cache directory once, as the Temporal servers are.
 */

export type SuiteVersion = '016' | '020';

/** The Node release the suite runs on when the tests' own Node is older than 22. */
const SUITE_NODE_VERSION = '22.23.3';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ADAPTER = path.join(ROOT, 'test/conformance/client.mjs');

export interface ScenarioOutcome {
  scenario: string;
  passed: boolean;
  /** The suite's summary and failed checks, for the assertion message. */
  report: string;
}

/** A Node of version 22 or later to run the suite with. */
export function suiteNode(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  const directory = path.join(loadConfig().cacheDir, `node-${SUITE_NODE_VERSION}-${process.platform}-${process.arch}`);
  const node = path.join(directory, 'bin', 'node');
  if (existsSync(node)) return node;
  const download = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-node-'));
  try {
    const name = `node-${process.platform}-${process.arch}@${SUITE_NODE_VERSION}`;
    const tarball = execFileSync('npm', ['pack', name, '--silent', '--pack-destination', download], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .at(-1)!;
    execFileSync('tar', ['xzf', path.join(download, tarball), '-C', download]);
    mkdirSync(path.dirname(directory), { recursive: true });
    rmSync(directory, { recursive: true, force: true });
    renameSync(path.join(download, 'package'), directory);
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
  return node;
}

const COMPILE_CACHE = path.join(loadConfig().cacheDir, 'node-compile-cache');

/** How long the suite lets the client run, below the test's 180 s per scenario. */
const CLIENT_TIMEOUT_MS = 150_000;

/** Scenarios run side by side: each starts the suite, the adapter and often the login CLI (three Node processes). */
const CONCURRENCY = 3;
let running = 0;
const waiting: Array<() => void> = [];

/**
 * Run one client scenario of the suite; `specVersion` only for 0.2.x, which skips an extension at an explicit version
 * (exit 0, no checks) unless forced: `extension` runs it anyway.
 */
export async function runScenario(
  version: SuiteVersion,
  scenario: string,
  specVersion?: string,
  extension = false,
): Promise<ScenarioOutcome> {
  if (running >= CONCURRENCY) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await runScenarioNow(version, scenario, specVersion, extension);
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

async function runScenarioNow(
  version: SuiteVersion,
  scenario: string,
  specVersion: string | undefined,
  extension: boolean,
): Promise<ScenarioOutcome> {
  const output = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-conformance-results-'));
  const cli = path.join(ROOT, `node_modules/conformance-${version}/dist/index.js`);
  const args = [cli, 'client', '--command', `${process.execPath} ${ADAPTER}`, '--scenario', scenario, '-o', output];
  // The suite gives the client 30 s; a login scenario (the CLI and the adapter besides the suite) took 45 to 70 s on
  // two cores under a load average of 15, and passed every check. The test's own limit per scenario is 180 s.
  args.push('--timeout', String(CLIENT_TIMEOUT_MS));
  if (specVersion !== undefined) args.push('--spec-version', specVersion);
  if (specVersion !== undefined && extension) args.push('--force');
  try {
    const { code, text } = await run(suiteNode(), args);
    const failed = text.split('\n').filter((line) => /FAILURE|Failed Checks|Passed: \d+\/\d+|OVERALL/.test(line));
    return { scenario, passed: code === 0 && /OVERALL: PASSED/.test(text), report: failed.join('\n') };
  } finally {
    rmSync(output, { recursive: true, force: true });
  }
}

function run(command: string, args: string[]): Promise<{ code: number | null; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Node 22 keeps the suite's compiled code between its runs (one a scenario); an older Node ignores the variable.
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0', NODE_COMPILE_CACHE: COMPILE_CACHE },
    });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, text }));
  });
}

/** The client scenarios a suite version lists at `specVersion` (extensions are listed apart, by name). */
export function listedScenarios(version: SuiteVersion, specVersion?: string): string[] {
  const cli = path.join(ROOT, `node_modules/conformance-${version}/dist/index.js`);
  const args = [cli, 'list', ...(version === '020' ? ['--client'] : [])];
  if (specVersion !== undefined) args.push('--spec-version', specVersion);
  const text = execFileSync(suiteNode(), args, { cwd: ROOT, encoding: 'utf8' });
  const clientPart = text.slice(text.indexOf('Client scenarios'));
  return [...clientPart.matchAll(/^\s+- (\S+) \[([^\]]*)\]/gm)]
    .filter(([, , versions]) => versions !== 'extension')
    .map(([, name]) => name!);
}
