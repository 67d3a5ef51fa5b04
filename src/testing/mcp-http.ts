import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import {
  createMcpHandler,
  isLegacyRequest,
  type McpServer,
  type McpServerFactory,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

export interface ServeMcpOptions {
  /** TCP port; default 0 (any free port). */
  port?: number;
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** Called when a 2025-11-25 client's session is initialised (2026-07-28 clients have no session). */
  onSession?: () => void;
  /**
   * Runs first for every request, connect-style: it answers the request itself (say a 401, or an OAuth metadata
   * document) or calls `next` to go on to the MCP endpoint.
   */
  middleware?: (request: IncomingMessage, response: ServerResponse, next: () => void) => void;
  /**
   * Speak only the 2025-11-25 session protocol, as servers built on SDK 1.x do: a client's `server/discover` probe is
   * refused (HTTP 400, no session), so it falls back to `initialize`. Default false: 2026-07-28 clients are served
   * statelessly, older ones through sessions. For tests of the session path (server-pushed questions mid-call,
   * `notifications/tools/list_changed`, lost sessions) with a client that would otherwise choose 2026-07-28.
   */
  legacyOnly?: boolean;
}

export interface ServedMcp {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:40123/mcp`, for an `mcpServers` entry's `url`. */
  url: string;
  port: number;
  /** 2025-11-25 sessions currently open (a client that closes cleanly ends its session with a DELETE). */
  sessions: () => number;
  /** Forget every session, as a restarted server would: the next request on an old session gets 404. */
  forgetSessions: () => Promise<void>;
  /** Cut every open HTTP connection and forget every session. */
  dropConnections: () => Promise<void>;
  /** Tell the 2026-07-28 clients listening (`subscriptions/listen`) that the tool list changed. */
  toolsChanged: () => void;
  close: () => Promise<void>;
}

/** The JSON-RPC error a restarted server answers a request on a session it does not know with. */
const SESSION_NOT_FOUND = { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null };

/**
 * Serve an MCP server of your own (`@modelcontextprotocol/server`'s `McpServer`) over Streamable HTTP in this
 * process, so a test can give its agent real tools without building a separate program. The factory gets the era it
 * serves (`{ era: 'modern' | 'legacy' }`), as `createMcpHandler` passes it:
 *
 * - 2026-07-28 requests are answered statelessly by `createMcpHandler`, one server instance per request; a call is
 *   cancelled by closing its HTTP request.
 * - 2025-11-25 clients get sessions (one instance per session, kept until the client ends it with a DELETE or the
 *   test forgets it), so server-pushed requests mid-call, `notifications/tools/list_changed` on the session's GET
 *   stream and `notifications/cancelled` reach them as they do on any 2025-11-25 server. The SDK's own legacy
 *   fallback is stateless, which would lose all three.
 */
export async function serveMcpOverHttp(
  createMcpServer: McpServerFactory,
  options: ServeMcpOptions = {},
): Promise<ServedMcp> {
  const host = options.host ?? '127.0.0.1';
  const modern = options.legacyOnly === true ? undefined : createMcpHandler(createMcpServer, { legacy: 'reject' });
  const sessions = new Map<string, { server: McpServer; transport: WebStandardStreamableHTTPServerTransport }>();
  const forgetSessions = async () => {
    const open = [...sessions.values()];
    sessions.clear();
    await Promise.allSettled(open.map(({ server }) => server.close()));
  };

  const serveSession = async (request: Request): Promise<Response> => {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
      const session = sessions.get(sessionId);
      if (session === undefined) return Response.json(SESSION_NOT_FOUND, { status: 404 });
      return session.transport.handleRequest(request);
    }
    // No session yet: this must be `initialize`; the transport answers 400 to anything else.
    const server = (await createMcpServer({ era: 'legacy', requestInfo: request })) as McpServer;
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { server, transport });
        options.onSession?.();
      },
      onsessionclosed: (id) => void sessions.delete(id),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    if (transport.sessionId === undefined) await server.close();
    return response;
  };

  // Node's own Request and Response stay global (src/node/http-server.ts says why): tests run clients beside it.
  const serve = getRequestListener(
    async (request) => {
      if (!new URL(request.url).pathname.startsWith('/mcp')) return new Response(null, { status: 404 });
      if (modern !== undefined && !(await isLegacyRequest(request))) return modern.fetch(request);
      return serveSession(request);
    },
    { overrideGlobalObjects: false },
  );
  const middleware = options.middleware;
  const http = createServer((request, response) => {
    if (middleware === undefined) void serve(request, response);
    else middleware(request, response, () => void serve(request, response));
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
    toolsChanged: () => modern?.notify.toolsChanged(),
    close: async () => {
      await forgetSessions();
      await modern?.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
