import path from 'node:path';
import { builtCommit } from '../baseline.js';

/**
 * `--long --baseline <ref>`: the `durable-agent` command as it was at that commit, built as a user installs it
 * (tsconfig.build.json into its dist/), so that the same long run is measured before and after a change. Exported
 * with `git archive` to bench-baseline-cli/<sha> in the project's cache directory, sharing this node_modules.
 */
export async function baselineCli(root: string, ref: string): Promise<{ build: string; cli: string }> {
  const output = 'dist/cli/index.js';
  const { sha, directory } = await builtCommit(root, ref, {
    cache: 'bench-baseline-cli',
    tsconfig: 'tsconfig.build.json',
    output,
  });
  return { build: `baseline ${sha.slice(0, 7)}`, cli: path.join(directory, output) };
}
