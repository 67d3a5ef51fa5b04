import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { cacheDirOf } from '../../src/config/index.js';

const execFileAsync = promisify(execFile);

/**
 * `--long --baseline <ref>`: the `durable-agent` command as it was at that commit, built as a user installs it
 * (tsconfig.build.json into its dist/), so that the same long run is measured before and after a change. Exported
 * with `git archive` to bench-baseline-cli/<sha> in the project's cache directory, sharing this node_modules.
 */
export async function baselineCli(root: string, ref: string): Promise<{ build: string; cli: string }> {
  const git = async (...args: string[]) => (await execFileAsync('git', args, { cwd: root })).stdout.trim();
  let sha: string;
  try {
    sha = await git('rev-parse', '--verify', `${ref}^{commit}`);
  } catch {
    throw new Error(`--baseline ${ref}: not a commit of this repository (try a hash, a tag or HEAD~1)`);
  }
  const directory = path.join(cacheDirOf(), 'bench-baseline-cli', sha);
  const cli = path.join(directory, 'dist/cli/index.js');
  if (!existsSync(cli)) {
    process.stderr.write(`[bench] building the durable-agent command at ${sha.slice(0, 7)} in ${directory}\n`);
    await rm(directory, { recursive: true, force: true });
    await mkdir(directory, { recursive: true });
    await execFileAsync('sh', ['-c', `git archive ${sha} | tar -x -C "${directory}"`], { cwd: root });
    await symlink(path.join(root, 'node_modules'), path.join(directory, 'node_modules'), 'dir');
    await execFileAsync(
      process.execPath,
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: directory,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  }
  return { build: `baseline ${sha.slice(0, 7)}`, cli };
}
