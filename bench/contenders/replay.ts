import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { bundleWorkflowCode, Worker, type ReplayWorkerOptions } from '@temporalio/worker';
import type { ReplayResult } from '../protocol.js';
import type { ReplayConfig } from './config.js';
import { quietBundlerLogger } from './runtime.js';

/**
 * Replay one history the way a cold worker does: fetch it (not timed), bundle the workflow code from scratch, then
 * `Worker.runReplayHistory`. Prints a {@link ReplayResult} as the only line of standard output.
 */
export async function replayOnColdWorker(
  config: ReplayConfig,
  workflowsPath: string,
  /** Decodes the history's payloads (durable-agent's encrypted contender); default none. */
  dataConverter?: DataConverter,
): Promise<void> {
  const connection = await Connection.connect({
    address: config.address,
    // A long conversation's history can be larger than gRPC's default 4 MB message.
    channelArgs: { 'grpc.max_receive_message_length': 512 * 2 ** 20 },
  });
  let history;
  try {
    const client = new Client({ connection, namespace: config.namespace });
    history = await client.workflow.getHandle(config.workflowId, config.runId).fetchHistory();
  } finally {
    await connection.close();
  }
  const bundleStarted = performance.now();
  // The workflow code bundled as its worker bundled it: with the data converter's failure converter, if any.
  const failureConverterPath = dataConverter?.failureConverterPath;
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath,
    logger: quietBundlerLogger,
    ...(failureConverterPath ? { failureConverterPath } : {}),
  });
  const replayStarted = performance.now();
  const options: ReplayWorkerOptions = { workflowBundle, ...(dataConverter ? { dataConverter } : {}) };
  await Worker.runReplayHistory(options, history, config.workflowId);
  const replayMs = performance.now() - replayStarted;
  const result: ReplayResult = {
    events: history.events?.length ?? 0,
    bundleMs: replayStarted - bundleStarted,
    replayMs,
    rssBytes: process.memoryUsage.rss(),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
