import { NativeConnection, Worker } from '@temporalio/worker';
import type { Config } from './config.js';

export interface RunWorkerOptions {
  config: Config;
  /** host:port of the Temporal frontend; defaults to `config.temporal.address` or `localhost:7233`. */
  address?: string;
  /** Called once the worker is polling, e.g. to print where it runs. */
  onReady?: (info: { address: string; namespace: string; taskQueue: string }) => void;
}

/**
 * Connect, run the durable-agent worker until SIGINT/SIGTERM (the Temporal runtime's default shutdown signals),
 * then drain and close. Resolves when the worker has stopped.
 */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { config } = options;
  const address = options.address ?? config.temporal.address ?? 'localhost:7233';
  const connection = await NativeConnection.connect({ address });
  try {
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue: config.taskQueue,
      workflowsPath: new URL('./workflows/index' + (import.meta.url.endsWith('.ts') ? '.ts' : '.js'), import.meta.url)
        .pathname,
    });
    options.onReady?.({ address, namespace: config.temporal.namespace, taskQueue: config.taskQueue });
    await worker.run();
  } finally {
    await connection.close();
  }
}
