import { readFile } from 'node:fs/promises';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import type { TemporalConfig } from '../config/index.js';
import { cancellableRetryInterceptor } from './grpc-retry.js';

/** Where `durable-agent dev` serves Temporal; clients use it when `TEMPORAL_ADDRESS` is unset. */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';

/** Connection options for the configured cluster: address, TLS or mTLS, API key, gRPC headers. */
export async function connectionOptions(config: TemporalConfig): Promise<ConnectionOptions> {
  return {
    address: config.address ?? DEFAULT_TEMPORAL_ADDRESS,
    tls: await tlsOptions(config),
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
    ...(config.metadata ? { metadata: config.metadata } : {}),
  };
}

async function tlsOptions(config: TemporalConfig): Promise<ConnectionOptions['tls']> {
  if (!config.tls) return false;
  const { clientCertPath, clientKeyPath, serverCaCertPath, serverName } = config;
  if (!clientCertPath && !serverCaCertPath && !serverName) return true;
  return {
    ...(clientCertPath && clientKeyPath
      ? { clientCertPair: { crt: await readFile(clientCertPath), key: await readFile(clientKeyPath) } }
      : {}),
    ...(serverCaCertPath ? { serverRootCACertificate: await readFile(serverCaCertPath) } : {}),
    ...(serverName ? { serverNameOverride: serverName } : {}),
  };
}

/**
 * Open a client connection to the configured cluster (it fails fast when the cluster cannot be reached), whose
 * retries stop when a call is cancelled (see `cancellableRetryInterceptor`). `DurableAgentClient.connect` is the
 * public way in.
 * @internal
 */
export async function connectTemporal(config: TemporalConfig): Promise<Connection> {
  return await connectCancellable(await connectionOptions(config));
}

/**
 * `Connection.connect` with durable-agent's retries (`cancellableRetryInterceptor`) in place of the SDK's: a cancelled
 * call stops retrying, and a retry due after `close()` fails its call instead of throwing from a timer. The CLI's and
 * the worker's connections are made so.
 * @internal
 */
export async function connectCancellable(options: ConnectionOptions): Promise<Connection> {
  // The interceptors are made before the connection, whose call context says which signal a call is made under.
  const made: { connection?: Connection } = {};
  made.connection = await Connection.connect({
    ...options,
    interceptors: [cancellableRetryInterceptor(() => made.connection?.callContextStorage.getStore()?.abortSignal)],
  });
  return made.connection;
}
