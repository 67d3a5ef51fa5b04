import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';

/** A fetch handler listening on Node: the server, its port and `http://host:port` (no trailing slash). */
export interface ListeningServer {
  server: ServerType;
  port: number;
  url: string;
}

/**
 * Serve a fetch handler (a Hono app's) over HTTP on Node, the one way this project does it. `@hono/node-server`
 * replaces `globalThis.Request` and `Response` with its own classes by default ("overrideGlobalObjects"); in a
 * process that also runs the worker, every `instanceof Response` elsewhere then fails for what `fetch` returns (the
 * MCP SDK's OAuth client read every refusal as `Invalid OAuth error response … [object Response]`). So the globals stay
 * Node's own.
 */
export async function listen(
  fetch: (request: Request) => Response | Promise<Response>,
  options: { port?: number; host: string },
): Promise<ListeningServer> {
  const server = await new Promise<ServerType>((resolve, reject) => {
    const started = serve(
      { fetch, port: options.port ?? 0, hostname: options.host, overrideGlobalObjects: false },
      () => resolve(started),
    );
    started.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  const { host } = options;
  return { server, port, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}` };
}
