import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { formatEncryptionKeys, type EncryptionKey } from '../../src/codec/keys.js';
import { findFreePort } from '../../src/temporal-servers/ports.js';
import { CLI, rememberProcess, until } from './helpers.js';

/**
 * `durable-agent dev` (the built CLI, as a developer runs it) with encryption keys set: its embedded Web UI decodes
 * payloads through the codec server it starts. The model is the scripted one at `modelBaseUrl`.
 */
export interface EncryptedDev {
  /** The environment of the dev process; the conversation commands use it too. */
  env: NodeJS.ProcessEnv;
  address: string;
  uiPort: number;
  codecUrl: string;
  output(): string;
  stop(): Promise<void>;
}

export async function startEncryptedDev(options: {
  keys: readonly EncryptionKey[];
  token: string;
  modelBaseUrl: string;
}): Promise<EncryptedDev> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-encrypted-dev-'));
  const [devPort, uiPort, codecPort] = [await findFreePort(), await findFreePort(), await findFreePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DURABLE_AGENT_DATA_DIR: dataDir,
    DURABLE_AGENT_DEV_PORT: String(devPort),
    DURABLE_AGENT_UI_PORT: String(uiPort),
    DURABLE_AGENT_CODEC_PORT: String(codecPort),
    DURABLE_AGENT_CODEC_TOKEN: options.token,
    DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys(options.keys),
    DURABLE_AGENT_TASK_QUEUE: `encrypted-dev-${process.pid}`,
    OPENAI_BASE_URL: options.modelBaseUrl,
    OPENAI_API_KEY: 'test',
    DURABLE_AGENT_MODEL: 'scripted-model',
  };
  delete env.TEMPORAL_ADDRESS;
  const child: ChildProcess = spawn(process.execPath, [CLI, 'dev'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  rememberProcess(child.pid);
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    await exited;
    // The dev server runs in its own process group: after a failed start it may outlive the CLI.
    const lock = existsSync(path.join(dataDir, 'dev.lock')) ? readFileSync(path.join(dataDir, 'dev.lock'), 'utf8') : '';
    const serverPid = lock ? (JSON.parse(lock) as { serverPid?: number }).serverPid : undefined;
    if (serverPid !== undefined) {
      try {
        process.kill(serverPid, 'SIGKILL');
      } catch {
        // Already stopped.
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await until(() => /Worker: polling task queue/.test(output), 'durable-agent dev to start');
  } catch (error) {
    await stop();
    throw new Error(`durable-agent dev did not start:\n${output}`, { cause: error });
  }
  const codecUrl = /Codec server: (http:\/\/\S+)/.exec(output)?.[1];
  if (codecUrl === undefined) {
    await stop();
    throw new Error(`durable-agent dev started no codec server:\n${output}`);
  }
  return { env, address: `127.0.0.1:${devPort}`, uiPort, codecUrl, output: () => output, stop };
}

/** `temporal workflow show --output json` with the real CLI, with or without the codec server. */
export async function temporalWorkflowShow(
  executable: string,
  address: string,
  workflowId: string,
  codec?: { endpoint: string; token: string },
): Promise<string> {
  const args = ['workflow', 'show', '--address', address, '--workflow-id', workflowId, '--output', 'json'];
  if (codec) args.push('--codec-endpoint', codec.endpoint, '--codec-auth', `Bearer ${codec.token}`);
  // Asynchronous: the codec server may answer from this process.
  const { stdout } = await promisify(execFile)(executable, args, { encoding: 'utf8', timeout: 60_000 });
  return stdout;
}

/** The text of every payload's data in `temporal workflow show --output json` (which prints it in base64). */
export function payloadTexts(showJson: string): string {
  const texts: string[] = [];
  const visit = (item: unknown): void => {
    if (typeof item !== 'object' || item === null) return;
    const { metadata, data } = item as { metadata?: unknown; data?: unknown };
    if (typeof metadata === 'object' && metadata !== null && typeof data === 'string') {
      texts.push(Buffer.from(data, 'base64').toString('utf8'));
      return;
    }
    for (const value of Object.values(item)) visit(value);
  };
  visit(JSON.parse(showJson));
  return texts.join('\n');
}
