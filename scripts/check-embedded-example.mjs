#!/usr/bin/env node
/**
 * The embedded example's documented commands, run as a user runs them (issue 42): `npm install && npm test` in
 * examples/embedded, then again in a copy of the folder outside the checkout that installs durable-agent from the
 * tarball `npm pack` makes. `npm test` of the checkout runs the example's test through vitest aliases, which hide how
 * the example installs; this runs its own install. Fails when a run fails, when npm warns of an install script left
 * undecided or of a peer dependency conflict, or when the example holds two copies of @temporalio/core-bridge.
 *
 * Each `npm test` runs in a process group of its own, killed once it ends, so a test that dies (in Rust, say) leaves no
 * time-skipping server running. Usage: node scripts/check-embedded-example.mjs (after npm run build and provision).
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const example = path.join(root, 'examples', 'embedded');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** What `npm install` may not say: an install script not decided in allowScripts, a peer dependency conflict. */
const FORBIDDEN_WARNINGS = /install-scripts|ERESOLVE|peer dep|conflicting peer/i;
/** Files of the example that an install and a build make; removed afterwards when this run made them. */
const MADE = ['node_modules', 'lib', 'package-lock.json'];

/**
 * Runs a command; its output goes to ours and is returned, stdout alone and both streams together. Rejects on a
 * non-zero exit. With `group`, the command runs in a process group of its own, killed when it ends; `echo: false`
 * keeps its stdout to itself.
 */
function run(command, args, cwd, { group = false, echo = true } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: group });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      output += chunk;
      if (echo) process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
      process.stderr.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (group) stopGroup(child.pid, `${command} ${args.join(' ')}`);
      if (code === 0) resolve({ stdout, output });
      else reject(new Error(`${command} ${args.join(' ')} in ${cwd} exited with ${code ?? signal}`));
    });
  });
}

/** Kills what is left of a process group: the servers of a test process that died before its teardown. */
function stopGroup(pid, what) {
  try {
    process.kill(-pid, 0);
  } catch {
    return; // Nothing left.
  }
  console.error(`[check-embedded-example] ${what} left processes running (a test server?): killing its group ${pid}`);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone in between.
  }
}

/** The documented commands, `npm install && npm test`, in a folder, and the checks on what they left. */
async function installAndTest(folder, label) {
  console.log(`\n[check-embedded-example] ${label}: npm install && npm test in ${folder}`);
  const install = (await run(npm, ['install', '--no-audit', '--no-fund'], folder)).output;
  const warnings = install.split('\n').filter((line) => /npm warn/i.test(line) && FORBIDDEN_WARNINGS.test(line));
  if (warnings.length > 0) throw new Error(`${label}: npm install warned:\n${warnings.join('\n')}`);
  const bridges = (
    await run(npm, ['ls', '--all', '--parseable', '@temporalio/core-bridge'], folder, { echo: false })
  ).stdout
    .split('\n')
    .filter((line) => line.trim() !== '');
  if (bridges.length !== 1) throw new Error(`${label}: ${bridges.length} copies of @temporalio/core-bridge installed`);
  await run(npm, ['test'], folder, { group: true });
}

async function main() {
  if (!existsSync(path.join(root, 'dist', 'index.js'))) throw new Error('dist/ is missing: run npm run build first');
  const made = MADE.filter((file) => !existsSync(path.join(example, file)));
  const outside = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-embedded-'));
  try {
    await installAndTest(example, 'in its folder');

    // --ignore-scripts: the build is there already (the install above ran `prepare`).
    const packed = await run(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', outside], root, {
      echo: false,
    });
    const tarball = path.join(outside, JSON.parse(packed.stdout)[0].filename);
    const copy = path.join(outside, 'embedded');
    cpSync(example, copy, {
      recursive: true,
      filter: (source) => !MADE.includes(path.relative(example, source).split(path.sep)[0]),
    });
    const manifest = JSON.parse(readFileSync(path.join(copy, 'package.json'), 'utf8'));
    manifest.dependencies['durable-agent'] = `file:${tarball}`;
    writeFileSync(path.join(copy, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    await installAndTest(copy, "from npm pack's tarball, outside the checkout");
    console.log('\n[check-embedded-example] both runs passed');
  } finally {
    rmSync(outside, { recursive: true, force: true });
    for (const file of made) rmSync(path.join(example, file), { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`\n[check-embedded-example] ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
