import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/index.js';
import { dynamicConfigFlags } from './dynamic-config.js';
import { ServerUnavailableError } from './errors.js';
import { waitForFrontend } from './frontend-readiness.js';
import { waitForPort } from './ports.js';
import { writePrivateFlags } from './private-flags.js';
import { searchAttributeFlags } from './search-attributes.js';

/** The dev server's SQLite file inside the data directory, so workflows survive a restart. */
export function devDatabasePath(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'temporal.sqlite');
}

export interface DevServerExtras {
  /**
   * The remote codec the Web UI decodes payloads with (`--ui-codec-endpoint`). It carries the codec token, so it is
   * handed over in a private file, never on the command line (./private-flags.ts).
   */
  codecEndpoint?: string;
}

/** Arguments of `temporal server start-dev` for `durable-agent dev`; `privateFlags` points at the private file. */
export function devServerArguments(config: Config, privateFlags: string[] = []): string[] {
  return [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(config.devPort),
    '--ui-port',
    String(config.uiPort),
    '--db-filename',
    devDatabasePath(config),
    '--namespace',
    config.temporal.namespace,
    '--log-level',
    'warn',
    '--ui-disable-news-fetch',
    ...privateFlags,
    ...searchAttributeFlags(),
    ...dynamicConfigFlags(),
  ];
}

export interface RunningDevServer {
  /** host:port of the gRPC frontend. */
  address: string;
  /** The Web UI, as a person opens it. */
  uiUrl: string;
  /** Process id of the server. */
  pid: number;
  /** Resolves with the exit code (or the signal's name) once the server process has exited. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

// Only the tail: the server logs at warn level, and the last lines say why it refused to start.
const STDERR_TAIL_CHARS = 4_000;

/**
 * Starts `temporal server start-dev` and resolves once its frontend answers GetSystemInfo and its Web UI its port. It runs in its own process
 * group so that Ctrl-C in the terminal reaches only durable-agent, which stops the server after the worker drained.
 */
export async function startDevServer(
  executable: string,
  config: Config,
  extras: DevServerExtras = {},
): Promise<RunningDevServer> {
  await fs.mkdir(config.dataDir, { recursive: true });
  const privateFlags =
    extras.codecEndpoint === undefined
      ? undefined
      : await writePrivateFlags({ 'ui-codec-endpoint': extras.codecEndpoint });
  const child = spawn(executable, devServerArguments(config, privateFlags?.args), {
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderrTail = '';
  let stopping = false;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    // While shutting down, the server's internal workers warn about every connection it closes: noise, not news.
    if (!stopping) process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
  });
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  await spawned.catch(async (error: unknown) => {
    await privateFlags?.remove();
    throw error;
  });
  const pid = child.pid!;

  const stop = async (graceMs = 5_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    stopping = true;
    child.kill('SIGTERM');
    const killTimer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(killTimer);
  };

  const gaveUp = new AbortController();
  void exited.then(() => gaveUp.abort());
  try {
    await waitForPort(config.devPort, { timeoutMs: 60_000, signal: gaveUp.signal });
    // The port opens before the frontend serves: a worker connecting then fails with "Frontend is not healthy yet".
    await waitForFrontend(`127.0.0.1:${config.devPort}`, { timeoutMs: 60_000, signal: gaveUp.signal });
    await waitForPort(config.uiPort, { timeoutMs: 30_000, signal: gaveUp.signal });
  } catch (error) {
    await privateFlags?.remove();
    await stop();
    const exitedWith = gaveUp.signal.aborted ? `exited (${String(await exited)})` : 'did not answer in time';
    throw new ServerUnavailableError(
      `The Temporal dev server ${exitedWith} on 127.0.0.1:${config.devPort}` +
        `${stderrTail ? `:\n${stderrTail.trim()}` : ''}`,
      { cause: error },
    );
  }
  // Read as the server started: the Web UI answering means it has its codec endpoint.
  await privateFlags?.remove();
  return {
    address: `127.0.0.1:${config.devPort}`,
    uiUrl: `http://localhost:${config.uiPort}`,
    pid,
    exited,
    stop,
  };
}
