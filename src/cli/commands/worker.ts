import { Command } from '@commander-js/extra-typings';
import { DEFAULT_TEMPORAL_ADDRESS } from '../../client/connection.js';
import { checkConfigFiles, loadConfig, type Config } from '../../config/index.js';
import { loadMcpConfig } from '../../worker/mcp/config.js';
import { readTenantCallsPerSecond } from '../../config/tenant-rate-limit.js';
import { readWorkerConcurrency } from '../../config/worker-concurrency.js';
import { ServerUnavailableError } from '../../temporal-servers/index.js';
import { redactProcessOutput } from '../../node/redacted-output.js';
import { environmentSecrets, type Redactor } from '../../shared/redaction.js';
import { runWorker, type WorkerReadyInfo } from '../../worker/agent-worker.js';
import { versionString } from '../../worker/versioning.js';
import { installWorkerRuntime } from '../../worker/logger.js';

/**
 * The worker's configuration (the environment, the certificate files it names, the MCP configuration file), checked
 * before anything starts or connects: a mistake is a ConfigError (exit code 2) found at once, not after a dev server
 * has started. (The worker reads the MCP file and its limits again when it starts; this read only checks them early.)
 */
export function loadWorkerConfig(): Config {
  const config = loadConfig();
  checkConfigFiles(config);
  loadMcpConfig(config.mcpConfigPath);
  readWorkerConcurrency();
  readTenantCallsPerSecond();
  return config;
}

/**
 * Runs the worker against TEMPORAL_ADDRESS; a cluster that cannot be reached becomes one line saying what to do,
 * instead of the core bridge's transport error dump.
 */
export async function runWorkerAgainstCluster(config: Config, secrets: Redactor): Promise<void> {
  const address = config.temporal.address ?? DEFAULT_TEMPORAL_ADDRESS;
  try {
    await runWorker({ config, address, onReady: printWorkerReady, secrets });
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'TransportError') throw error;
    const reason = /message: "([^"]+)"/.exec(error.message)?.[1] ?? error.message;
    throw new ServerUnavailableError(
      `Cannot reach Temporal at ${address} (${reason}). Start a server first (\`durable-agent dev\` without ` +
        'TEMPORAL_ADDRESS runs one), or set TEMPORAL_ADDRESS to a running cluster.',
      { cause: error },
    );
  }
}

export function printWorkerReady(info: WorkerReadyInfo): void {
  const version = info.deploymentVersion
    ? ` as Worker Deployment Version ${versionString(info.deploymentVersion)}`
    : '';
  console.log(
    `Worker: polling task queue ${info.taskQueue} in namespace ${info.namespace} at ${info.address}${version}. ` +
      'Press Ctrl-C to stop.',
  );
  if (info.deploymentVersion) {
    const { deploymentName, buildId } = info.deploymentVersion;
    // A version that is not current gets no new conversations: say how to make it so, once, where it is started.
    console.log(
      `Worker: new conversations come to this version once it is current (\`durable-agent deployments\` shows it): ` +
        `temporal worker deployment set-current-version --deployment-name ${deploymentName} --build-id ${buildId}`,
    );
  }
}

export function workerCommand() {
  return new Command('worker')
    .description('Run only the durable-agent worker, against the Temporal cluster at TEMPORAL_ADDRESS.')
    .addHelpText(
      'after',
      `
Environment:
  TEMPORAL_ADDRESS          host:port of the cluster (default localhost:7233)
  TEMPORAL_NAMESPACE        namespace (default default)
  TEMPORAL_API_KEY          API key for Temporal Cloud (implies TLS)
  TEMPORAL_TLS              use TLS (default true with an API key or a client certificate)
  TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH   mTLS client certificate and key
  DURABLE_AGENT_TASK_QUEUE  task queue (default durable-agent)
  DURABLE_AGENT_MCP_CONFIG  the mcpServers file (docs/mcp.md), checked before connecting
  DURABLE_AGENT_ENCRYPTION_KEYS  encrypt payloads: id:base64-of-32-bytes, comma-separated (docs/security.md)
  DURABLE_AGENT_TENANT_CALLS_PER_SECOND  each tenant's model and tool calls per second, times its weight, set on the
                            task queue at start (docs/tenants.md); unset leaves the queue's own setting

Worker Versioning (off by default; docs/upgrading.md):
  DURABLE_AGENT_DEPLOYMENT_NAME   run as a version of this Worker Deployment (default durable-agent); turns versioning on
  DURABLE_AGENT_BUILD_ID          this version's build id (default: the package version, +commit in a git checkout)
  DURABLE_AGENT_WORKER_VERSIONING true turns versioning on with the defaults, false turns it off

  DURABLE_AGENT_TOKEN_DIR   where \`durable-agent mcp login\` keeps OAuth tokens (default ~/.config/durable-agent/mcp-tokens)`,
    )
    .action(async () => {
      const config = loadWorkerConfig();
      const secrets = environmentSecrets();
      // What the dependencies print themselves too: the worker adds the configured keys and MCP secrets as it starts.
      redactProcessOutput(secrets);
      installWorkerRuntime(secrets);
      await runWorkerAgainstCluster(config, secrets);
    });
}
