import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The env name the flags are filed under; `--env` on the command line wins over `TEMPORAL_ENV`. */
const ENV_NAME = 'durable-agent-dev';

/** Flags handed to the `temporal` CLI through a private file instead of its command line. */
export interface PrivateFlags {
  /** The arguments that point the CLI at the file (a path and a name, nothing secret). */
  args: string[];
  /** Delete the file (and its directory); the CLI reads it once, as it starts. */
  remove(): Promise<void>;
}

/**
 * Hand the `temporal` CLI flag values that must not appear on its command line, where every local user reads them
 * (`ps`, /proc/<pid>/cmdline): the Web UI's codec endpoint carries the codec token. The CLI sets any flag from its env
 * file (`--env-file`, YAML `env.<name>.<flag>: value`; JSON is YAML), so the values go into a file that only this user
 * can read (mode 0600 in a fresh 0700 directory), and the command line names only the file.
 */
export async function writePrivateFlags(flags: Record<string, string>): Promise<PrivateFlags> {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-flags-'));
  const file = path.join(directory, 'temporal.yaml');
  await fs.writeFile(file, JSON.stringify({ env: { [ENV_NAME]: flags } }), { mode: 0o600 });
  return {
    args: ['--env-file', file, '--env', ENV_NAME],
    remove: () => fs.rm(directory, { recursive: true, force: true }),
  };
}
