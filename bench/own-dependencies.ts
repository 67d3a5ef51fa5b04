import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Installing a directory's packages offline from the registry's cache takes under a minute; allow a slow machine. */
const INSTALL_TIMEOUT_MS = 5 * 60_000;

/**
 * Make sure a directory with its own package.json (bench/peer, bench/chart) has its node_modules: run `npm ci` there
 * when `probe` (a file inside node_modules) is missing. Returns why it could not, or undefined when it is ready.
 */
export async function ensureOwnDependencies(directory: string, probe: string): Promise<string | undefined> {
  if (existsSync(`${directory}/node_modules/${probe}`)) return undefined;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = existsSync(`${directory}/package-lock.json`) ? ['ci'] : ['install'];
  process.stderr.write(`[bench] npm ${args[0]} in ${directory}\n`);
  try {
    await execFileAsync(npm, [...args, '--no-audit', '--no-fund'], {
      cwd: directory,
      timeout: INSTALL_TIMEOUT_MS,
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (error) {
    const output = (error as { stderr?: string }).stderr ?? '';
    const first = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return `npm ${args[0]} in ${directory} failed: ${first}\n${npmErrors(output)}`;
  }
  return existsSync(`${directory}/node_modules/${probe}`)
    ? undefined
    : `npm ${args[0]} in ${directory} did not install ${probe}`;
}

/**
 * What npm said went wrong: its first `npm error` lines with content (a refused lock file lists every missing package
 * there, before a page of usage text), or the last lines of its output when it printed none.
 */
function npmErrors(stderr: string): string {
  const lines = stderr.trim().split('\n');
  const usage = lines.findIndex((line) => line.startsWith('npm error Usage:'));
  const errors = lines
    .slice(0, usage === -1 ? undefined : usage)
    .filter((line) => /^npm error \S/.test(line) && !line.includes('A complete log of this run'));
  return (errors.length > 0 ? errors.slice(0, 16) : lines.slice(-5)).join('\n');
}
