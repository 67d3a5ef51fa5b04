import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { serveStreamingBridge } from '../../src/bridge/serve.js';
import { loadTemporalConfig } from '../../src/config/index.js';

/**
 * `durable-agent serve` for the first-token measurement, in a process of its own as users run it: the bridge the CLI
 * serves (`serveStreamingBridge` on a `DurableAgentClient.connect` client), on the benchmark's dev server and
 * durable-agent's task queue. Tells the parent its URL over IPC; stops when the parent disconnects.
 */

interface BridgeConfig {
  address: string;
  namespace: string;
  taskQueue: string;
}

async function main(): Promise<void> {
  if (process.send === undefined) throw new Error('The bridge process runs as a child of bench/index.js (IPC).');
  const config = JSON.parse(process.argv[2] ?? '') as BridgeConfig;
  const agent = await DurableAgentClient.connect({
    temporal: loadTemporalConfig({ TEMPORAL_ADDRESS: config.address, TEMPORAL_NAMESPACE: config.namespace }),
    taskQueue: config.taskQueue,
    encryptionKeys: [],
  });
  const served = await serveStreamingBridge({ agent });
  process.once('disconnect', () => {
    void served.close().finally(() => agent.close());
  });
  process.send({ url: served.url });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
  process.disconnect?.();
});
