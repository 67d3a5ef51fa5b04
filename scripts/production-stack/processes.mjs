// Detached processes: started in a session of their own with their output in a log file, so they outlive the command
// that started them, and stopped only when /proc shows they are still the process that was recorded.
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * Whether `pid` runs a command line that contains `marker` (the config file of a Temporal role, the data directory of
 * PostgreSQL): a pid recorded long ago may belong to an unrelated process by now, which must not be signalled.
 * Where /proc does not exist, a live pid is trusted.
 */
export function isOurProcess(pid, marker) {
  if (typeof pid !== 'number' || !isAlive(pid)) return false;
  try {
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    // A zombie (killed, not yet reaped by init) has an empty command line and is gone for our purposes.
    return commandLine.includes(marker);
  } catch (error) {
    return error.code !== 'ENOENT';
  }
}

/** Starts `command` detached with stdout and stderr appended to `logFile`; returns its pid. */
export function spawnDetached(command, args, { cwd, logFile, env }) {
  const log = openSync(logFile, 'a');
  try {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', log, log],
    });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${command}`);
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/** Resolves once `pid` has exited (or is a zombie), rejecting after `timeoutMs`. */
export async function waitForExit(pid, marker, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (isOurProcess(pid, marker)) {
    if (Date.now() > deadline) throw new Error(`process ${pid} did not exit within ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; returns once the process is gone. Does nothing for a process not ours. */
export async function stopProcess(pid, marker, graceMs = 10_000) {
  if (!isOurProcess(pid, marker)) return;
  signal(pid, 'SIGTERM');
  try {
    await waitForExit(pid, marker, graceMs);
  } catch {
    signal(pid, 'SIGKILL');
    await waitForExit(pid, marker);
  }
}

/** SIGKILL, and wait until it is gone. */
export async function killProcess(pid, marker) {
  if (!isOurProcess(pid, marker)) return;
  signal(pid, 'SIGKILL');
  await waitForExit(pid, marker);
}

function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}
