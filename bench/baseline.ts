import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { cacheDirOf } from '../src/config/index.js';
import type { ContenderDefinition } from './contenders/index.js';

const execFileAsync = promisify(execFile);

/**
 * `--baseline <git ref>`: durable-agent as it was at that commit, as one more contender in the same run, so a change
 * is measured before and after side by side (the machine's load drifts too much to compare two runs). The commit's
 * files are exported with `git archive` to bench-baseline/<sha> in the project's cache directory (the one provisioning
 * uses; outside the repository, out of the way of its compiler, linter and tests), share the
 * project's node_modules, and are compiled with that commit's tsconfig.bench.json.
 */
export async function baselineContender(root: string, ref: string): Promise<ContenderDefinition> {
  const git = async (...args: string[]) => (await execFileAsync('git', args, { cwd: root })).stdout.trim();
  let sha: string;
  try {
    sha = await git('rev-parse', '--verify', `${ref}^{commit}`);
  } catch {
    throw new Error(`--baseline ${ref}: not a commit of this repository (try a hash, a tag or HEAD~1)`);
  }
  const short = sha.slice(0, 7);
  const directory = path.join(cacheDirOf(), 'bench-baseline', sha);
  const script = `${directory}/bench/dist/bench/contenders/durable-agent.js`;
  if (!existsSync(script)) {
    process.stderr.write(`[bench] building durable-agent at ${short} in ${directory}\n`);
    await rm(directory, { recursive: true, force: true });
    await mkdir(directory, { recursive: true });
    await execFileAsync('sh', ['-c', `git archive ${sha} | tar -x -C "${directory}"`], { cwd: root });
    await symlink(`${root}node_modules`, `${directory}/node_modules`, 'dir');
    try {
      await execFileAsync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.bench.json'], {
        cwd: directory,
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      const output = (error as { stdout?: string }).stdout ?? '';
      throw new Error(`--baseline ${ref}: the commit's benchmark does not compile here:\n${output.slice(0, 2000)}`);
    }
    if (!existsSync(script)) throw new Error(`--baseline ${ref}: ${short} has no durable-agent contender to run`);
  }
  return {
    name: `durable-agent@${short}`,
    label: `durable-agent at ${short} (baseline)`,
    script,
    durable: true,
  };
}
