import type { TestProject } from 'vitest/node';
import { loadConfig } from '../src/config/index.js';
import { resolveDevServer, resolveTestServer } from '../src/temporal-servers/index.js';

/**
 * Provisions both servers once for the whole run, so parallel test files never race to build them, and hands their
 * paths to the test processes through the same env vars a user would set (forked workers inherit process.env).
 * Without Go or Maven the variables stay unset and each environment falls back to the SDK's own download.
 */
export default async function setup(_project: TestProject): Promise<void> {
  const config = loadConfig();
  const [devServer, testServer] = [await resolveDevServer(config), await resolveTestServer(config)];
  if (devServer.kind === 'path') process.env.TEMPORAL_CLI_PATH = devServer.path;
  if (testServer.kind === 'path') process.env.TEMPORAL_TEST_SERVER_PATH = testServer.path;
  process.stderr.write(
    `[durable-agent] test servers: dev server ${describe(devServer)}; time-skipping test server ${describe(testServer)}\n`,
  );
}

function describe(server: Awaited<ReturnType<typeof resolveDevServer>>): string {
  return server.kind === 'path' ? `${server.path} (${server.source})` : `from the SDK's download (${server.reason})`;
}
