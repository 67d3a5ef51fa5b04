// The stack's directory: where each part lives under DIR, and DIR/state.json, which records the ports chosen at the
// first `up`, the versions that set DIR up, and the pid of each running process.
import { readFileSync, writeFileSync, renameSync, openSync, closeSync, writeSync, rmSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StackError, ExitCode } from './errors.mjs';
import { isAlive } from './processes.mjs';

/**
 * The layout of DIR this script writes. A DIR of another layout (or set up by another Temporal Server version) is
 * refused by `up`, with what to do, instead of being started half-understood.
 */
export const LAYOUT = 1;

/** The roles of `status` and `kill`, in the order they are started. */
export const ROLES = ['postgres', 'history', 'matching', 'frontend', 'internal-worker'];
/** The Temporal Server roles and the `--service` each runs. */
export const TEMPORAL_SERVICES = {
  history: 'history',
  matching: 'matching',
  frontend: 'frontend',
  'internal-worker': 'worker',
};

export function pathsOf(dir) {
  return {
    dir,
    state: path.join(dir, 'state.json'),
    lock: path.join(dir, 'stack.lock'),
    config: path.join(dir, 'config'),
    dynamicConfig: path.join(dir, 'config', 'dynamicconfig.yaml'),
    logs: path.join(dir, 'logs'),
    postgres: path.join(dir, 'postgres'),
    postgresData: path.join(dir, 'postgres', 'data'),
    configOf: (role) => path.join(dir, 'config', `${role}.yaml`),
    logOf: (role) => path.join(dir, 'logs', `${role}.log`),
  };
}

/** DIR/state.json, or undefined when DIR holds no stack yet. */
export function readState(paths) {
  if (!existsSync(paths.state)) return undefined;
  try {
    return JSON.parse(readFileSync(paths.state, 'utf8'));
  } catch (error) {
    throw new StackError(
      `${paths.state} is not readable JSON (${error.message}): it was not written by this script; use another DIR.`,
    );
  }
}

/** Written whole and renamed into place, so a killed command never leaves half a file. */
export function writeState(paths, state) {
  const temporary = `${paths.state}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(temporary, paths.state);
}

/** The roles whose recorded process still runs. */
export function runningRoles(state) {
  return Object.entries(state?.pids ?? {})
    .filter(([, pid]) => typeof pid === 'number' && isAlive(pid))
    .map(([role]) => role);
}

/**
 * Takes DIR/stack.lock for a command that starts or stops processes (`up`, `kill`, `down`), so two of them never work
 * on one DIR at once. A lock whose owner is gone (a killed command) is taken over.
 */
export function acquireLock(paths) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = openSync(paths.lock, 'wx');
      writeSync(handle, JSON.stringify({ pid: process.pid, hostname: os.hostname(), startedAt: Date.now() }));
      closeSync(handle);
      return () => rmSync(paths.lock, { force: true });
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    let owner;
    try {
      owner = JSON.parse(readFileSync(paths.lock, 'utf8'));
    } catch {
      owner = undefined;
    }
    if (owner && owner.hostname === os.hostname() && isAlive(owner.pid)) {
      throw new StackError(
        `Another production-stack command (pid ${owner.pid}) is working on ${paths.dir}: wait for it to finish.`,
        ExitCode.Failure,
      );
    }
    rmSync(paths.lock, { force: true });
  }
  throw new StackError(`Could not take ${paths.lock}: remove it if no production-stack command is running.`);
}
