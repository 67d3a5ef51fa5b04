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
  const script = 'bench/dist/bench/contenders/durable-agent.js';
  const { sha, directory } = await builtCommit(root, ref, {
    cache: 'bench-baseline',
    tsconfig: 'tsconfig.bench.json',
    output: script,
  });
  const short = sha.slice(0, 7);
  if (!existsSync(path.join(directory, script))) {
    throw new Error(`--baseline ${ref}: ${short} has no durable-agent contender to run`);
  }
  return {
    name: `durable-agent@${short}`,
    label: `durable-agent at ${short} (baseline)`,
    script: path.join(directory, script),
    durable: true,
  };
}

/**
 * `ref`'s code, exported with `git archive` to `<cache>/<sha>` in the project's cache directory (sharing this
 * node_modules) and compiled with its `tsconfig`, unless `output` is there already from an earlier run.
 */
export async function builtCommit(
  root: string,
  ref: string,
  { cache, tsconfig, output }: { cache: string; tsconfig: string; output: string },
): Promise<{ sha: string; directory: string }> {
  let sha: string;
  try {
    sha = (await execFileAsync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: root })).stdout.trim();
  } catch {
    throw new Error(`--baseline ${ref}: not a commit of this repository (try a hash, a tag or HEAD~1)`);
  }
  const directory = path.join(cacheDirOf(), cache, sha);
  if (existsSync(path.join(directory, output))) return { sha, directory };
  process.stderr.write(`[bench] building ${sha.slice(0, 7)} (${tsconfig}) in ${directory}\n`);
  await rm(directory, { recursive: true, force: true });
  await mkdir(directory, { recursive: true });
  await execFileAsync('sh', ['-c', `git archive ${sha} | tar -x -C "${directory}"`], { cwd: root });
  await symlink(path.join(root, 'node_modules'), path.join(directory, 'node_modules'), 'dir');
  try {
    await execFileAsync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', tsconfig], {
      cwd: directory,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const out = (error as { stdout?: string }).stdout ?? '';
    throw new Error(`--baseline ${ref}: the commit does not compile here (${tsconfig}):\n${out.slice(0, 2000)}`);
  }
  return { sha, directory };
}
