import { defineConfig } from 'vitest/config';

/**
 * The example's own config, so that vitest run in this folder does not climb to the checkout's (which sets up the
 * checkout's own tests). Starting the test server and bundling the workflows take real seconds.
 */
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], hookTimeout: 120_000, testTimeout: 60_000 },
});
