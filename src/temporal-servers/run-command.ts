import { spawn } from 'node:child_process';
import { DurableAgentError } from '../shared/errors.js';

export interface RunCommandOptions {
  /** Working directory; default the current one. */
  cwd?: string;
  /** Variables added to (or overriding) the inherited environment; default none. */
  env?: Record<string, string>;
}

export class CommandFailedError extends DurableAgentError {}

// The tail is enough to show why a build failed without flooding the terminal with module download lines.
const OUTPUT_TAIL_CHARS = 4_000;

/** Runs a command to completion and returns its stdout; a non-zero exit throws with the tail of its output. */
export async function runCommand(command: string, args: string[], options: RunCommandOptions = {}): Promise<string> {
  return await new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-OUTPUT_TAIL_CHARS);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) {
        resolve(stdout);
        return;
      }
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const output = (stderr || stdout.slice(-OUTPUT_TAIL_CHARS)).trim();
      reject(new CommandFailedError(`\`${command} ${args.join(' ')}\` ${how}${output ? `:\n${output}` : ''}`));
    });
  });
}

/** Whether an executable is on PATH, found by running it with a harmless argument. */
export async function commandExists(command: string, versionArgs: string[] = ['--version']): Promise<boolean> {
  return await new Promise((resolve) => {
    const child = spawn(command, versionArgs, { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}
