import { Command } from '@commander-js/extra-typings';
import { loadConfig } from '../../config.js';
import { runWorker } from '../../worker.js';

export function printWorkerReady(info: { address: string; namespace: string; taskQueue: string }): void {
  console.log(
    `Worker: polling task queue ${info.taskQueue} in namespace ${info.namespace} at ${info.address}. ` +
      'Press Ctrl-C to stop.',
  );
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
  DURABLE_AGENT_TASK_QUEUE  task queue (default durable-agent)`,
    )
    .action(async () => {
      await runWorker({ config: loadConfig(), onReady: printWorkerReady });
    });
}
