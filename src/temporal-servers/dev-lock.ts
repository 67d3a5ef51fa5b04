import fs from 'node:fs/promises';
import path from 'node:path';
import { DurableAgentError } from '../shared/errors.js';
import { ExitCode } from '../shared/exit-codes.js';
import { isProcessAlive } from './processes.js';

/** `durable-agent dev` is already running on the same data directory, or its ports are taken. */
export class DevAlreadyRunningError extends DurableAgentError {
  /** Read by the CLI's reportError to pick the exit code. */
  readonly exitCode = ExitCode.Unavailable;
}

interface DevLockContents {
  /** The `durable-agent dev` process. */
  pid: number;
  /** Its dev server, once started: stopped by the next `dev` if the owner died without stopping it. */
  serverPid?: number;
  devPort: number;
  uiPort: number;
  startedAt: string;
}

export interface DevLock {
  /** Records the dev server's pid so a later `dev` can stop a server whose owner was killed. */
  recordServer(serverPid: number): Promise<void>;
  release(): Promise<void>;
}

async function readLock(lockPath: string): Promise<DevLockContents | undefined> {
  try {
    return JSON.parse(await fs.readFile(lockPath, 'utf8')) as DevLockContents;
  } catch {
    return undefined;
  }
}

/**
 * Takes `dev.lock` in the data directory. One data directory holds one SQLite database that only one dev server may
 * open, so a second `dev` on it stops with a message naming the first. A lock left by a killed `dev` is taken over,
 * and its orphaned server (which runs in its own process group) is stopped first.
 */
export async function acquireDevLock(
  dataDir: string,
  ports: { devPort: number; uiPort: number },
  log: (line: string) => void,
): Promise<DevLock> {
  await fs.mkdir(dataDir, { recursive: true });
  const lockPath = path.join(dataDir, 'dev.lock');
  const contents: DevLockContents = { pid: process.pid, ...ports, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.writeFile(lockPath, JSON.stringify(contents), { flag: 'wx' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 3) throw error;
    }
    const owner = await readLock(lockPath);
    if (owner && isProcessAlive(owner.pid)) {
      throw new DevAlreadyRunningError(
        `durable-agent dev is already running (pid ${owner.pid}, since ${owner.startedAt}) with data directory ` +
          `${dataDir}: gRPC on 127.0.0.1:${owner.devPort}, Web UI on http://localhost:${owner.uiPort}. ` +
          'Use that one, stop it (Ctrl-C in its terminal), or set DURABLE_AGENT_DATA_DIR to another directory.',
      );
    }
    if (owner?.serverPid !== undefined && (await isDevServerProcess(owner.serverPid))) {
      log(`[durable-agent] dev: stopping the dev server (pid ${owner.serverPid}) left behind by a killed dev process`);
      await stopOrphan(owner.serverPid);
    }
    await fs.rm(lockPath, { force: true });
  }
  return {
    async recordServer(serverPid) {
      contents.serverPid = serverPid;
      await fs.writeFile(lockPath, JSON.stringify(contents));
    },
    async release() {
      const current = await readLock(lockPath);
      if (current?.pid === process.pid) await fs.rm(lockPath, { force: true });
    },
  };
}

// A pid from an old lock may belong to an unrelated process by now: only a process that is visibly a dev server is
// stopped. Where /proc does not exist the orphan is left alone and its port check below reports it.
async function isDevServerProcess(pid: number): Promise<boolean> {
  if (!isProcessAlive(pid)) return false;
  try {
    return (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').includes('start-dev');
  } catch {
    return false;
  }
}

async function stopOrphan(pid: number): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  for (let waited = 0; waited < 5_000 && isProcessAlive(pid); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (isProcessAlive(pid)) signal('SIGKILL');
}
