import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface ServeMcpOptions {
  /** TCP port; default 0 (any free port). */
  port?: number;
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** Called when a client's session is initialised. */
  onSession?: () => void;
  /**
   * Runs first for every request, connect-style (an Express app fits): it answers the request itself (say a 401, or
   * an OAuth metadata document) or calls `next` to go on to the MCP endpoint.
   */
  middleware?: (request: IncomingMessage, response: ServerResponse, next: () => void) => void;
}

export interface ServedMcp {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:40123/mcp`, for an `mcpServers` entry's `url`. */
  url: string;
  port: number;
  /** Sessions currently open (a client that closes cleanly ends its session with a DELETE). */
  sessions: () => number;
  /** Forget every session, as a restarted server would: the next request on an old session gets 404. */
  forgetSessions: () => Promise<void>;
  /** Cut every open HTTP connection and forget every session. */
  dropConnections: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * Serve an MCP server of your own over Streamable HTTP in this process, so a test can give its agent real tools
 * without building a separate program. Sessions are kept (one `McpServer` per session, as `createMcpServer` makes
 * them), so cancellations (`notifications/cancelled`) reach the running tool call.
 */
export async function serveMcpOverHttp(
  createMcpServer: () => McpServer,
  options: ServeMcpOptions = {},
): Promise<ServedMcp> {
  const host = options.host ?? '127.0.0.1';
  const sessions = new Map<string, { server: McpServer; transport: StreamableHTTPServerTransport }>();
  const forgetSessions = async () => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(open.map(({ server }) => server.close()));
  };

  const serve = (request: IncomingMessage, response: ServerResponse) => {
    if (!request.url?.startsWith('/mcp')) {
      response.writeHead(404).end();
      return;
    }
    const handle = async () => {
      const sessionId = request.headers['mcp-session-id'];
      if (typeof sessionId === 'string') {
        const session = sessions.get(sessionId);
        if (session === undefined) {
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(
            JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }),
          );
          return;
        }
        await session.transport.handleRequest(request, response);
        return;
      }
      // No session yet: this must be `initialize`; the transport answers 400 to anything else.
      const server = createMcpServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, { server, transport });
          options.onSession?.();
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      await transport.handleRequest(request, response);
    };
    handle().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  };
  const middleware = options.middleware;
  const http = createServer((request, response) => {
    if (middleware === undefined) serve(request, response);
    else middleware(request, response, () => serve(request, response));
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/mcp`,
    port,
    sessions: () => sessions.size,
    forgetSessions,
    dropConnections: async () => {
      http.closeAllConnections();
      await forgetSessions();
    },
    close: async () => {
      await forgetSessions();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
