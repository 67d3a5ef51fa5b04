import { randomBytes } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isProcessAlive } from './processes.js';
import type { Progress } from './progress.js';

export interface CacheEntry {
  /** Cache directory, normally `config.cacheDir`. */
  cacheDir: string;
  /** Directory name inside the cache, keyed by version, e.g. `temporal-cli-1.8.2`. */
  name: string;
  /** Path inside the entry that exists only once the entry is complete, e.g. `temporal`. */
  executable: string;
}

export function cachedExecutablePath(entry: CacheEntry): string {
  return path.join(entry.cacheDir, entry.name, entry.executable);
}

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await fs.access(file, fsConstants.X_OK);
    return (await fs.stat(file)).isFile();
  } catch {
    return false;
  }
}

interface LockOwner {
  pid: number;
  hostname: string;
  startedAt: number;
}

// A lock whose owner cannot be checked (another host sharing the cache) is trusted for this long: longer than the
// slowest cold build seen, so only a crashed build is ever taken over.
const FOREIGN_LOCK_MAX_AGE_MS = 60 * 60 * 1000;
const LOCK_POLL_MS = 500;

async function readLockOwner(lockPath: string): Promise<LockOwner | undefined> {
  try {
    return JSON.parse(await fs.readFile(lockPath, 'utf8')) as LockOwner;
  } catch {
    // Unreadable means it is being written right now or was just released: treat as held and look again.
    return undefined;
  }
}

function isStale(owner: LockOwner): boolean {
  if (owner.hostname === os.hostname()) return !isProcessAlive(owner.pid);
  return Date.now() - owner.startedAt > FOREIGN_LOCK_MAX_AGE_MS;
}

async function acquireLock(lockPath: string, progress: Progress): Promise<() => Promise<void>> {
  const me: LockOwner = { pid: process.pid, hostname: os.hostname(), startedAt: Date.now() };
  let reportedWaiting = false;
  for (;;) {
    try {
      const handle = await fs.open(lockPath, 'wx');
      try {
        await handle.writeFile(JSON.stringify(me));
      } finally {
        await handle.close();
      }
      return async () => {
        await fs.rm(lockPath, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await readLockOwner(lockPath);
    if (owner && isStale(owner)) {
      progress.info(`removing the stale lock of process ${owner.pid}, which stopped while provisioning`);
      // Two processes may both remove a stale lock and both build; the atomic rename in installIntoCache keeps the
      // cache whole even then, so the lock only has to prevent duplicate work in the common case.
      await fs.rm(lockPath, { force: true });
      continue;
    }
    if (!reportedWaiting && owner) {
      progress.info(`waiting for process ${owner.pid}, which is provisioning the same server (lock ${lockPath})`);
      reportedWaiting = true;
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

/**
 * Returns the cached executable, building the entry first when it is missing. The build writes into a staging
 * directory beside the entry that is renamed into place only when complete, so a killed build never leaves a half
 * entry behind; a lock file keeps parallel processes (test workers, two terminals) from building the same entry twice.
 */
export async function installIntoCache(
  entry: CacheEntry,
  progress: Progress,
  build: (stagingDir: string) => Promise<void>,
): Promise<string> {
  const executable = cachedExecutablePath(entry);
  if (await isExecutable(executable)) return executable;

  await fs.mkdir(entry.cacheDir, { recursive: true });
  const finalDir = path.join(entry.cacheDir, entry.name);
  const release = await acquireLock(`${finalDir}.lock`, progress);
  try {
    if (await isExecutable(executable)) return executable;
    await removeLeftovers(entry);
    const stagingDir = path.join(entry.cacheDir, `.${entry.name}.staging-${randomBytes(4).toString('hex')}`);
    await fs.mkdir(stagingDir);
    try {
      await build(stagingDir);
      if (!(await isExecutable(path.join(stagingDir, entry.executable)))) {
        throw new Error(`Provisioning ${entry.name} finished without producing ${entry.executable}.`);
      }
      // An entry without its executable was left by hand or by an older layout; a complete one is never removed.
      if (!(await isExecutable(executable))) await removeTree(finalDir);
      try {
        await fs.rename(stagingDir, finalDir);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // Another process that took over a stale lock finished first; its entry is as good as ours.
        if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await isExecutable(executable))) throw error;
      }
    } finally {
      await removeTree(stagingDir);
    }
    progress.info(`cached at ${finalDir}`);
    return executable;
  } finally {
    await release();
  }
}

// Staging directories of builds that were killed: only removed while holding the lock, so never a live build's.
async function removeLeftovers(entry: CacheEntry): Promise<void> {
  const prefix = `.${entry.name}.staging-`;
  for (const name of await fs.readdir(entry.cacheDir)) {
    if (name.startsWith(prefix)) await removeTree(path.join(entry.cacheDir, name));
  }
}

/** Removes a tree even when it holds read-only directories, as copies of the Go module cache do. */
export async function removeTree(dir: string): Promise<void> {
  try {
    await makeWritable(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  await fs.rm(dir, { recursive: true, force: true });
}

/** `chmod -R u+w`. */
export async function makeWritable(target: string): Promise<void> {
  const stat = await fs.lstat(target);
  if (stat.isSymbolicLink()) return;
  await fs.chmod(target, stat.mode | 0o200);
  if (!stat.isDirectory()) return;
  for (const name of await fs.readdir(target)) await makeWritable(path.join(target, name));
}
