import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import base from '../vitest.config.js';

/**
 * The fault runs of test/reliability (real processes killed and restarted; minutes of real time, mostly waiting for
 * heartbeat timeouts), kept out of `npm test`. Run them with `node scripts/reliability.mjs`, which also renders the
 * results table in docs/reliability.md.
 */
export default defineConfig({
  ...base,
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    ...base.test,
    include: ['test/reliability/**/*.reliability.ts'],
    // Workflows on the SDK's workflow thread, as in production: the processes these runs kill and restart are the
    // product's own, not the test files' (vitest.config.ts moves them onto the test's thread for speed).
    env: {},
    // Two files at a time, each in a fresh process, as these runs were measured: their kills, outages and heartbeat
    // timeouts are timed.
    maxWorkers: 2,
    isolate: true,
    // Each file runs its scenarios concurrently and waits on real heartbeat timeouts.
    testTimeout: 300_000,
    hookTimeout: 240_000,
  },
});
