import { listen } from '../node/http-server.js';
import { isIP } from 'node:net';
import { authenticationEnabled, checkAuthenticationOptions } from './authentication.js';
import { allowedOrigins, createStreamingBridge, type StreamingBridge, type StreamingBridgeOptions } from './bridge.js';
import { ServeConfigError } from './serve-tokens.js';

export interface ServeBridgeOptions extends StreamingBridgeOptions {
  /** TCP port; default 0 (a free one). */
  port?: number;
  /**
   * Interface; default `127.0.0.1`. Any other than a loopback one needs authentication (`token` or `secret`). Its
   * name is added to `allowedHosts` unless it is a wildcard (`0.0.0.0`, `::`).
   */
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
  checkServeOptions(options);
  const host = options.host ?? '127.0.0.1';
  const bridge = createStreamingBridge({ ...options, allowedHosts: allowedHosts(options, host) });
  const { server, port, url } = await listen(bridge.app.fetch, { port: options.port, host });
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
    url,
    port,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Refuse, before anything starts, a configuration that would expose conversations: a non-loopback interface without
 * authentication, every origin allowed without it, a short token or secret. Throws a {@link ServeConfigError}.
 */
export function checkServeOptions(options: Omit<ServeBridgeOptions, 'agent'>): void {
  checkAuthenticationOptions(options);
  allowedOrigins(options);
  const host = options.host ?? '127.0.0.1';
  if (!isLoopback(host) && !authenticationEnabled(options)) {
    throw new ServeConfigError(
      `Refusing to listen on ${host} without authentication: anyone who reaches the port could read every ` +
        'conversation and send messages that run the model and its tools. Set DURABLE_AGENT_SERVE_TOKEN (an operator ' +
        'token) and/or DURABLE_AGENT_SERVE_SECRET (for signed tokens), or listen on 127.0.0.1.',
    );
  }
}

/** `127.0.0.1` (any of 127/8), `::1`, `localhost`. */
export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name === '::1' || (isIP(name) === 4 && name.startsWith('127.'));
}

/** The configured hosts, and the interface's own name unless it is a wildcard (`0.0.0.0`, `::`). */
function allowedHosts(options: ServeBridgeOptions, host: string): string[] {
  const hosts = [...(options.allowedHosts ?? [])];
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  return wildcard ? hosts : [...hosts, host];
}
