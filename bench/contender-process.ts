import { execFile, fork, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import type { ContenderConfig, ReplayConfig } from './contenders/config.js';
import type { BatchResult, Command, ConversationResult, Reply, ReplayResult } from './protocol.js';

const execFileAsync = promisify(execFile);

/** How long a contender may take to start (bundling workflow code on two busy cores takes tens of seconds). */
const STARTUP_TIMEOUT_MS = 180_000;
/** How long one command may take before the benchmark gives up on the contender. */
const COMMAND_TIMEOUT_MS = 600_000;

type CommandWithoutId<C> = C extends Command ? Omit<C, 'id'> : never;

/** A contender running in a child process, driven over IPC (see bench/harness.ts for the other side). */
export class ContenderProcess {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (error: Error) => void }>();
  private exited: Error | undefined;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    readonly startupMs: number,
  ) {
    child.on('message', (reply: Reply) => {
      if (reply.type === 'ready') return;
      const id = reply.id ?? undefined;
      const waiter = id === undefined ? undefined : this.waiting.get(id);
      if (waiter === undefined || id === undefined) return;
      this.waiting.delete(id);
      if (reply.type === 'error') waiter.reject(new Error(`${name}: ${reply.message}`));
      else waiter.resolve(reply);
    });
    child.on('exit', (code, signal) => {
      this.exited = new Error(`${name}: the contender process exited (${signal ?? `code ${code}`})`);
      for (const waiter of this.waiting.values()) waiter.reject(this.exited);
      this.waiting.clear();
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Fork `script serve <config>` and wait until it says `ready` (its worker is polling). */
  static async start(
    name: string,
    script: string,
    config: ContenderConfig,
    env: Record<string, string> = {},
    execArgv: string[] = [],
  ): Promise<ContenderProcess> {
    const child = fork(script, ['serve', JSON.stringify(config)], {
      env: { ...process.env, ...env },
      execArgv,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      const startupMs = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${name}: not ready after ${STARTUP_TIMEOUT_MS / 1000} s`)),
          STARTUP_TIMEOUT_MS,
        );
        child.on('message', (reply: Reply) => {
          if (reply.type === 'ready') {
            clearTimeout(timer);
            resolve(reply.startupMs);
          } else if (reply.type === 'error' && reply.id === undefined) {
            clearTimeout(timer);
            reject(new Error(`${name} did not start: ${reply.message}`));
          }
        });
        child.once('exit', (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`${name} exited while starting (${signal ?? `code ${code}`})`));
        });
      });
      return new ContenderProcess(name, child, startupMs);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }

  private request(command: CommandWithoutId<Command>): Promise<Reply> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${this.name}: no answer to ${command.type} after ${COMMAND_TIMEOUT_MS / 1000} s`));
      }, COMMAND_TIMEOUT_MS);
      this.waiting.set(id, {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.child.send({ ...command, id });
    });
  }

  async batch(command: Omit<Extract<Command, { type: 'batch' }>, 'id' | 'type'>): Promise<BatchResult> {
    const reply = await this.request({ type: 'batch', ...command });
    if (reply.type !== 'batch') throw new Error(`${this.name}: expected a batch result, got ${reply.type}`);
    return reply.result;
  }

  async conversation(turns: Extract<Command, { type: 'conversation' }>['turns']): Promise<ConversationResult> {
    const reply = await this.request({ type: 'conversation', turns });
    if (reply.type !== 'conversation') throw new Error(`${this.name}: expected a conversation, got ${reply.type}`);
    return reply.result;
  }

  /** The model and tool time this process spent for turns another process started, by workflow id. */
  async drain(): Promise<Record<string, number>> {
    const reply = await this.request({ type: 'drain' });
    if (reply.type !== 'drain') throw new Error(`${this.name}: expected drained work, got ${reply.type}`);
    return reply.workMs;
  }

  /** Ask the contender to stop its worker; kill it if it does not exit in time. */
  async close(): Promise<void> {
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      await Promise.race([this.request({ type: 'close' }), delay(30_000)]);
    } catch {
      // Closing anyway below.
    }
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Run `script replay <config>` in a fresh process (a cold worker) and read the result it prints. */
export async function replayInFreshProcess(
  script: string,
  config: ReplayConfig,
  env: Record<string, string> = {},
): Promise<ReplayResult> {
  const { stdout } = await execFileAsync(process.execPath, [script, 'replay', JSON.stringify(config)], {
    env: { ...process.env, ...env },
    maxBuffer: 16 * 1024 * 1024,
    timeout: COMMAND_TIMEOUT_MS,
  });
  const line = stdout
    .trim()
    .split('\n')
    .findLast((candidate) => candidate.startsWith('{'));
  if (line === undefined) throw new Error(`replay of ${config.workflowId}: no result on stdout:\n${stdout}`);
  return JSON.parse(line) as ReplayResult;
}
