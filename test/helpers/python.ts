import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '../../src/config/index.js';

/**
 * Python for the checks that run real Python programs (examples/python, servers built on the official Python MCP
 * SDK): a virtual environment with a pinned requirements file from PyPI, created once per requirements file under the
 * cache directory, so only the first run installs anything.
 */

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The Python of a virtual environment with `requirements` installed. A machine without python3 fails here, by name,
 * saying which check needed it: CI has Python, and a skipped check proves nothing.
 */
export async function pythonEnvironment(requirements: string, neededFor: string): Promise<string> {
  const found = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (found.error || found.status !== 0) {
    throw new Error(
      `python3 is needed to run ${neededFor}: install Python 3.10 or later (CI has 3.11) and make python3 available ` +
        `on the PATH. (${found.error?.message ?? found.stderr})`,
    );
  }
  const key = createHash('sha256').update(readFileSync(requirements)).digest('hex').slice(0, 16);
  const venv = path.join(loadConfig().cacheDir, 'python', `venv-${key}`);
  const executable = path.join(venv, 'bin', 'python');
  if (existsSync(executable)) return executable;
  // Built beside its place and renamed into it, so a failed or concurrent install never leaves half a venv there.
  const building = `${venv}.building-${process.pid}`;
  await fs.rm(building, { recursive: true, force: true });
  await fs.mkdir(path.dirname(venv), { recursive: true });
  await check(runCommand('python3', ['-m', 'venv', building]), 'python3 -m venv');
  await check(
    runCommand(path.join(building, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '-r', requirements]),
    `pip install -r ${path.basename(requirements)}`,
  );
  try {
    await fs.rename(building, venv);
  } catch (error) {
    // Another run put its venv there first: use that one.
    await fs.rm(building, { recursive: true, force: true });
    if (!existsSync(executable)) throw error;
  }
  return executable;
}

/** Run a command to its end, killing it (and failing) when it takes longer than `timeoutMs`. */
export function runCommand(
  command: string,
  args: string[],
  childEnv = process.env,
  timeoutMs = 280_000,
): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} took longer than ${timeoutMs} ms:\n${stdout}${stderr}`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function check(run: Promise<CommandRun>, what: string): Promise<void> {
  const { code, stdout, stderr } = await run;
  if (code !== 0) throw new Error(`${what} exited with ${code}:\n${stdout}${stderr}`);
}
