import { Command } from '@commander-js/extra-typings';
import { loadConfig } from '../../config.js';
import {
  ensureDevServer,
  ensureTestServer,
  TEMPORAL_CLI_VERSION,
  TEMPORAL_TEST_SERVER_VERSION,
} from '../../temporal-servers/index.js';

export function provisionCommand() {
  return new Command('provision')
    .description(
      'Build or fetch both Temporal servers into the cache (progress on stderr) and print their paths; ' +
        'later runs reuse the cache. Useful to warm a CI machine.',
    )
    .addHelpText(
      'after',
      `
Environment:
  DURABLE_AGENT_CACHE_DIR    cache directory (default ~/.cache/durable-agent)
  TEMPORAL_CLI_PATH          use this \`temporal\` binary instead of building one
  TEMPORAL_TEST_SERVER_PATH  use this time-skipping test server instead of fetching one

Needs Go 1.26.4+ for the dev server and Maven with Java 8+ for the test server.`,
    )
    .action(async () => {
      const config = loadConfig();
      const devServer = await ensureDevServer(config);
      const testServer = await ensureTestServer(config);
      console.log(`dev server (temporal CLI ${TEMPORAL_CLI_VERSION}): ${devServer}`);
      console.log(`time-skipping test server (${TEMPORAL_TEST_SERVER_VERSION}): ${testServer}`);
    });
}
