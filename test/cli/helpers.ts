import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The built CLI, as a user runs it: `npm test` builds before vitest starts.
export const cliPath = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunningProcess {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output: () => string;
  exited: Promise<number | null>;
  write: (text: string) => void;
}

const running = new Set<ChildProcess>();

/** Kill whatever is still running (call from afterEach/afterAll so a failed test leaves nothing behind). */
export async function killAll(): Promise<void> {
  const children = [...running];
  running.clear();
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

export function spawnTracked(command: string, args: string[], env: NodeJS.ProcessEnv): RunningProcess {
  const child = spawn(command, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  running.add(child);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return { child, output: () => output, exited, write: (text) => child.stdin.write(text) };
}

/** `durable-agent worker` in its own process, returned once it polls (or failing with its output if it exits). */
export async function startCliWorker(env: NodeJS.ProcessEnv): Promise<RunningProcess> {
  const worker = spawnTracked(process.execPath, [cliPath, 'worker'], env);
  const deadline = Date.now() + 60_000;
  while (!worker.output().includes('Worker: polling') && worker.child.exitCode === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!worker.output().includes('Worker: polling')) throw new Error(`The worker did not start: ${worker.output()}`);
  return worker;
}

/** Run `durable-agent <args>` to completion; `input` is piped to its stdin (default: no stdin, /dev/null). */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { input?: string } = {},
): Promise<CliRun> {
  const stdin = options.input === undefined ? 'ignore' : 'pipe';
  const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: [stdin, 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  if (child.stdin) {
    // A command that exits without reading its input (a usage error) closes the pipe: that is its answer, not ours.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input);
  }
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  running.delete(child);
  return { code, stdout, stderr };
}

/** Quote one argument for `sh -c`. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
