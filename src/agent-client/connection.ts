import { readFile } from 'node:fs/promises';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import type { TemporalConfig } from '../config.js';
import { cancellableRetryInterceptor } from './grpc-retry.js';

/** Where `durable-agent dev` serves Temporal; clients use it when `TEMPORAL_ADDRESS` is unset. */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';

/** Connection options for the configured cluster: address, TLS or mTLS, API key. */
export async function connectionOptions(config: TemporalConfig): Promise<ConnectionOptions> {
  const tls = !config.tls
    ? false
    : config.clientCertPath && config.clientKeyPath
      ? {
          clientCertPair: {
            crt: await readFile(config.clientCertPath),
            key: await readFile(config.clientKeyPath),
          },
        }
      : true;
  return {
    address: config.address ?? DEFAULT_TEMPORAL_ADDRESS,
    tls,
    ...(config.apiKey ? { apiKey: config.apiKey } : {}),
  };
}

/**
 * Open a client connection to the configured cluster (it fails fast when the cluster cannot be reached), whose
 * retries stop when a call is cancelled (see `cancellableRetryInterceptor`). `DurableAgentClient.connect` is the
 * public way in.
 * @internal
 */
export async function connectTemporal(config: TemporalConfig): Promise<Connection> {
  return await Connection.connect({
    ...(await connectionOptions(config)),
    interceptors: [cancellableRetryInterceptor()],
  });
}
