import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Provisions both Temporal servers once, before any test file starts its own environment.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup-runtime.ts'],
    // A cold provisioning builds the Temporal CLI from source: minutes on a small machine.
    hookTimeout: 15 * 60_000,
    // Each test file starts its own server (one environment per file) and bundles workflow code: real seconds.
    testTimeout: 60_000,
    teardownTimeout: 30_000,
    // Separate processes, because each file owns native Temporal resources (servers, a Runtime) that must die with it.
    pool: 'forks',
    // Two cores: two files at a time keeps a JVM test server's start-up (worst 1.4 s with both cores busy, see
    // docs/servers.md) far inside the SDK's fixed 5 s window.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
