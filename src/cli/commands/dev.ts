import { Command } from '@commander-js/extra-typings';
import { startDevCodecServer, type DevCodecServer } from './dev-codec.js';
import type { Config } from '../../config/index.js';
import { DevAlreadyRunningError, acquireDevLock, type DevLock } from '../../temporal-servers/dev-lock.js';
import { devDatabasePath, startDevServer, type RunningDevServer } from '../../temporal-servers/dev-server-process.js';
import { ensureDevServer, isPortOpen, ServerUnavailableError, stderrLog } from '../../temporal-servers/index.js';
import { redactProcessOutput } from '../../node/redacted-output.js';
import { environmentSecrets, type Redactor } from '../../shared/redaction.js';
import { runWorker } from '../../worker/agent-worker.js';
import { installWorkerRuntime } from '../../worker/logger.js';
import { loadWorkerConfig, printWorkerReady, runWorkerAgainstCluster } from './worker.js';

export function devCommand() {
  return new Command('dev')
    .description(
      'Run the durable-agent worker. Without TEMPORAL_ADDRESS it first starts an embedded Temporal dev server ' +
        '(Web UI included, state kept in DURABLE_AGENT_DATA_DIR) and stops it again on Ctrl-C.',
    )
    .addHelpText(
      'after',
      `
Environment:
  TEMPORAL_ADDRESS         use this cluster and start no server (default: start the embedded dev server)
  DURABLE_AGENT_DEV_PORT   gRPC port of the embedded dev server (default 7233)
  DURABLE_AGENT_UI_PORT    Web UI port of the embedded dev server (default 8233)
  DURABLE_AGENT_DATA_DIR   where the dev server keeps its SQLite database (default .durable-agent)
  DURABLE_AGENT_CACHE_DIR  where provisioned servers are cached (default ~/.cache/durable-agent)
  DURABLE_AGENT_ENCRYPTION_KEYS  encrypt payloads (docs/security.md); the Web UI then decodes them through a codec
                           server started on DURABLE_AGENT_CODEC_PORT (default 8234) with DURABLE_AGENT_CODEC_TOKEN
  TEMPORAL_CLI_PATH        use this \`temporal\` binary instead of building one
  DURABLE_AGENT_MCP_CONFIG the mcpServers file (docs/mcp.md), checked before the dev server starts`,
    )
    .action(async () => {
      const config = loadWorkerConfig();
      const secrets = environmentSecrets();
      // What the dependencies print themselves too: the worker adds the configured keys and MCP secrets as it starts.
      redactProcessOutput(secrets);
      if (config.temporal.address !== undefined) {
        installWorkerRuntime(secrets);
        await runWorkerAgainstCluster(config, secrets);
        return;
      }
      await runWithDevServer(config, secrets);
    });
}

async function assertPortFree(port: number, variable: string): Promise<void> {
  if (!(await isPortOpen(port))) return;
  throw new DevAlreadyRunningError(
    `Port ${port} on 127.0.0.1 is already in use, perhaps by another Temporal server. To run only the worker ` +
      `against a server on that port, set TEMPORAL_ADDRESS=localhost:${port}; to start a second dev server, set ` +
      `${variable} to a free port.`,
  );
}

/**
 * Starts the dev server, runs the worker until SIGINT/SIGTERM, then stops the server, in that order so the worker can
 * finish reporting its tasks to a server that is still up.
 */
async function runWithDevServer(config: Config, secrets: Redactor): Promise<void> {
  let lock: DevLock | undefined;
  let server: RunningDevServer | undefined;
  let codec: DevCodecServer | undefined;
  let phase: 'starting' | 'running' | 'stopping' = 'starting';

  const stopEverything = async () => {
    await server?.stop();
    await codec?.close();
    await lock?.release();
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (phase === 'running') {
      // The Temporal Runtime's own handler shuts the worker down, which makes runWorker resolve below.
      phase = 'stopping';
      stderrLog(`[durable-agent] dev: ${signal}: draining the worker, then stopping the dev server (again to force)`);
      return;
    }
    stderrLog(`[durable-agent] dev: ${signal}: stopping now`);
    void (async () => {
      await server?.stop(phase === 'stopping' ? 0 : undefined);
      await lock?.release();
      process.exit(130);
    })();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    lock = await acquireDevLock(config.dataDir, { devPort: config.devPort, uiPort: config.uiPort }, stderrLog);
    await assertPortFree(config.devPort, 'DURABLE_AGENT_DEV_PORT');
    await assertPortFree(config.uiPort, 'DURABLE_AGENT_UI_PORT');
    const executable = await ensureDevServer(config);
    codec = await startDevCodecServer(config);
    server = await startDevServer(executable, config, { codecEndpoint: codec?.endpoint });
    await lock.recordServer(server.pid);
    console.log(`Temporal dev server: ${server.address} (namespace ${config.temporal.namespace})`);
    console.log(`Database: ${devDatabasePath(config)}`);
    console.log(`Web UI: ${server.uiUrl}`);
    if (codec) console.log(`Codec server: ${codec.url} (the Web UI shows decrypted payloads through it)`);

    let serverDied = false;
    void server.exited.then((exit) => {
      if (phase !== 'running') return;
      serverDied = true;
      stderrLog(`[durable-agent] dev: the dev server exited by itself (${String(exit)}); stopping the worker`);
      // The same path as Ctrl-C, so the worker shuts down through the Runtime like it always does.
      process.kill(process.pid, 'SIGTERM');
    });
    // Creating the Runtime now installs its SIGINT/SIGTERM handlers before the worker exists, so no signal is lost;
    // its logger redacts the worker's secrets.
    installWorkerRuntime(secrets);
    phase = 'running';
    await runWorker({ config, address: server.address, onReady: printWorkerReady, secrets });
    if (serverDied) throw new ServerUnavailableError('The Temporal dev server stopped unexpectedly.');
  } finally {
    phase = 'stopping';
    await stopEverything();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
