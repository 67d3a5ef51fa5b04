import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { REPO_ROOT } from './helpers.js';

/** scripts/production-stack.mjs, driven as its contract says: the commands and their output, nothing internal. */
const SCRIPT = path.join(REPO_ROOT, 'scripts/production-stack.mjs');

export type StackRole = 'postgres' | 'frontend' | 'history' | 'matching' | 'internal-worker';

export interface KillReport {
  role: StackRole;
  killed: number;
  pid: number;
  /** From the SIGKILL (postgres: the immediate shutdown) until the role served again. */
  servingAfterMs: number;
}

/**
 * Runs a command to completion. With `showProgress`, its stderr goes to this process's (the first `up` builds Temporal
 * Server for minutes, and a CI log should show it working); otherwise it is kept for the error.
 */
function run(args: string[], timeoutMs: number, showProgress = false): string {
  const result = spawnSync(process.execPath, [SCRIPT, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: timeoutMs,
    stdio: ['ignore', 'pipe', showProgress ? 'inherit' : 'pipe'],
  });
  if (result.status !== 0) {
    const why = showProgress ? 'its output is above' : result.stderr;
    throw new Error(`production-stack ${args.join(' ')} exited ${result.status ?? result.signal}: ${why}`);
  }
  return result.stdout;
}

/** A stack in `dir`, up: its TEMPORAL_ADDRESS (the last line of stdout). The first `up` may build Temporal Server. */
export function stackUp(dir: string): string {
  const lines = run(['up', dir], 30 * 60_000, true)
    .trim()
    .split('\n');
  const address = /^TEMPORAL_ADDRESS=(.+)$/.exec(lines.at(-1) ?? '')?.[1];
  if (!address) throw new Error(`production-stack up printed no TEMPORAL_ADDRESS line last: ${lines.join('\n')}`);
  return address;
}

/** `kill DIR ROLE`, asynchronously: it returns once the role serves again, and the caller acts meanwhile. */
export async function stackKill(dir: string, role: StackRole): Promise<KillReport> {
  const { stdout } = await promisify(execFile)(process.execPath, [SCRIPT, 'kill', dir, role], {
    cwd: REPO_ROOT,
    timeout: 5 * 60_000,
  });
  return JSON.parse(stdout.trim()) as KillReport;
}

export function stackStatus(dir: string): { role: StackRole; pid: number | null; url?: string }[] {
  return run(['status', dir], 60_000)
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { role: StackRole; pid: number | null; url?: string });
}

export function stackDown(dir: string): void {
  run(['down', dir], 5 * 60_000);
}
