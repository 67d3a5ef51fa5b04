import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createStreamingBridge, type StreamingBridge, type StreamingBridgeOptions } from './bridge.js';

export interface ServeBridgeOptions extends StreamingBridgeOptions {
  /** TCP port; default 0 (a free one). */
  port?: number;
  /** Interface; default `127.0.0.1`. */
  host?: string;
}

export interface ServedBridge extends AsyncDisposable {
  readonly bridge: StreamingBridge;
  /** `http://host:port`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Stop listening, end the open event streams and stop the subscriptions (their calls settled). */
  close(): Promise<void>;
}

/** Serve the streaming bridge over HTTP on Node. */
export async function serveStreamingBridge(options: ServeBridgeOptions): Promise<ServedBridge> {
  const bridge = createStreamingBridge(options);
  const host = options.host ?? '127.0.0.1';
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: bridge.app.fetch, port: options.port ?? 0, hostname: host }, () => resolve(started));
    started.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      // Event streams never end by themselves: drop them so `close` does not wait for the browsers.
      if ('closeAllConnections' in server) server.closeAllConnections();
      await Promise.all([bridge.close(), stopped]);
    })());
  return {
    bridge,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close,
    [Symbol.asyncDispose]: close,
  };
}
