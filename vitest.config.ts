import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * examples/embedded is a package of its own that depends on this one by path: its imports of durable-agent resolve
 * to this package's build through its `exports`, as they would from its node_modules after `npm install`, so its test
 * runs in `npm test` without a second install.
 */
function ownPackageAliases() {
  const manifest = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  return Object.entries(manifest.exports)
    .filter(([, target]) => typeof target === 'object')
    .map(([subpath, target]) => ({
      find: new RegExp(`^durable-agent${subpath.slice(1).replace(/[/.]/g, '\\$&')}$`),
      replacement: fileURLToPath(new URL((target as { default: string }).default, import.meta.url)),
    }));
}

export default defineConfig({
  resolve: { alias: ownPackageAliases() },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    // Provisions both Temporal servers once, before any test file starts its own environment. Vitest puts no time
    // limit on global setup, which matters: a cold provisioning compiles the Temporal CLI for minutes.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup-runtime.ts', 'test/setup-globals.ts'],
    // Workers created in a test file run their workflows on the file's own thread (the SDK's debug mode; README,
    // "Testing your own agent"): the same sandbox and the same determinism checks, without a workflow thread that
    // loads the SDK's modules again for every worker a test starts (half a second of CPU each; an eighth of the
    // suite's CPU). Processes the tests start inherit it. The fault runs (scripts/reliability.config.ts) run as
    // production does.
    env: { TEMPORAL_DEBUG: '1' },
    // beforeAll starts a server and often bundles workflow code, which takes real seconds on two busy cores.
    hookTimeout: 120_000,
    // Each test file starts its own server (one environment per file) and bundles workflow code: real seconds.
    testTimeout: 60_000,
    teardownTimeout: 30_000,
    // Child processes, not threads: the native Temporal resources a file creates (servers, a Runtime) end with its
    // process at the latest.
    pool: 'forks',
    // Four files at a time on two cores: much of a file's time is waiting (heartbeat timeouts, outages, retries), so
    // more files than cores keep the cores busy (npm test: three files 562 → 451 s at the same 809 s of CPU; with the
    // shared processes below, four 356 → 324 s, shuffled 371 → 350 s). A JVM test server's start-up stays inside the
    // SDK's fixed 5 s window (0.25 s on an idle machine with its class archive; 1.9 s at worst under heavy load before
    // it, see docs/servers.md), and a start that misses it is tried again (src/testing/environment.ts).
    maxWorkers: 4,
    fileParallelism: true,
    // A process runs file after file without loading their modules again: the Temporal SDK alone is 0.7 s of CPU per
    // file that uses it, a sixth of the suite's CPU (npm test 417 → 356 s). Every file stops what it starts in its
    // afterAll and restores what it stubs, and the files pass in any order (checked with --sequence.shuffle.files);
    // the Runtime is shared (test/setup-runtime.ts), and a file that leaves Node's fetch classes replaced fails
    // (test/setup-globals.ts). The test environments' client fails a call still retried at teardown instead of
    // throwing into the next file (src/testing/environment.ts).
    isolate: false,
  },
});
