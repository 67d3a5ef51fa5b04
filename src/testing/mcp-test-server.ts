import { pathToFileURL } from 'node:url';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { errorMessage } from '../shared/errors.js';
import { serveMcpOverHttp, type ServeMcpOptions, type ServedMcp } from './mcp-http.js';
import type { TestServerCounters } from './mcp-test-server-events.js';
import { createTestServer, sharedState } from './mcp-test-server-tools.js';

export { ASK_USER_SCHEMA } from './mcp-test-server-tools.js';
export {
  countTestServerEvents,
  readTestServerEvents,
  type TestServerCounters,
  type TestServerEvent,
} from './mcp-test-server-events.js';

/**
 * A small MCP server for tests: it counts calls, fails, hangs until cancelled, crashes, and changes its tool list.
 * Built on SDK v2 (`@modelcontextprotocol/server`), it speaks 2026-07-28 (stateless) and 2025-11-25 (sessions), so a
 * client that negotiates gets 2026-07-28; `--legacy-only` (or `legacyOnly: true`) makes it a 2025-11-25 server only.
 *
 *   node dist/testing/mcp-test-server.js                 # stdio
 *   node dist/testing/mcp-test-server.js --http --port N # Streamable HTTP at http://127.0.0.1:N/mcp
 *   node dist/testing/mcp-test-server.js --legacy-only   # stdio, 2025-11-25 only
 *
 * or in-process over HTTP with {@link startTestMcpServer}. With `MCP_TEST_COUNTER_FILE` set, every process start,
 * session, call and cancellation is appended to that file as a JSON line (see {@link countTestServerEvents}).
 */

export interface StartTestMcpServerOptions {
  transport: 'http';
  /** TCP port; default 0 (any free port). */
  port?: number;
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** Runs before the MCP endpoint, e.g. an authorization check (see `ServeMcpOptions.middleware`). */
  middleware?: ServeMcpOptions['middleware'];
  /**
   * Speak only the 2025-11-25 session protocol, as servers built on SDK 1.x do; default false (2026-07-28 clients
   * are served statelessly, older ones through sessions). See `ServeMcpOptions.legacyOnly`.
   */
  legacyOnly?: boolean;
}

export interface RunningTestMcpServer {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:40123/mcp`. */
  url: string;
  port: number;
  /** Live counters of this server (all sessions and requests). */
  counters: TestServerCounters;
  /** 2025-11-25 sessions currently open (a client that closes cleanly ends its session with a DELETE). */
  openSessions(): number;
  /**
   * Forget every session and the stored values, as a restarted server would: the next request on an old session gets
   * 404.
   */
  forgetSessions(): Promise<void>;
  /** Cut every open HTTP connection (what the `crash` tool does), and forget as {@link forgetSessions} does. */
  dropConnections(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Start the test server over Streamable HTTP in this process: 2026-07-28 requests statelessly (one McpServer per
 * request), 2025-11-25 clients in sessions (one McpServer per session). Counters and added tools are the server's;
 * stored values (`set_value`, `increment`) a session's own, and at 2026-07-28, which has no session, the server's.
 */
export async function startTestMcpServer(options: StartTestMcpServerOptions): Promise<RunningTestMcpServer> {
  const shared = sharedState(() => void running.dropConnections());
  const served: ServedMcp = await serveMcpOverHttp(({ era }) => createTestServer(shared, era), {
    port: options.port,
    host: options.host,
    onSession: () => shared.recorder.session(),
    middleware: options.middleware,
    legacyOnly: options.legacyOnly,
  });
  shared.toolsChanged = served.toolsChanged;
  // What a restart loses: a 2026-07-28 request after it starts from empty values, as a new session does.
  const restarted = () => {
    shared.values.clear();
    shared.increments.clear();
  };
  const running: RunningTestMcpServer = {
    url: served.url,
    port: served.port,
    counters: shared.recorder.counters,
    openSessions: served.sessions,
    forgetSessions: () => served.forgetSessions().then(restarted),
    dropConnections: () => served.dropConnections().then(restarted),
    close: served.close,
  };
  return running;
}

async function main(argv: string[]): Promise<void> {
  const legacyOnly = argv.includes('--legacy-only');
  if (argv.includes('--http')) {
    const portIndex = argv.indexOf('--port');
    const port = portIndex === -1 ? 0 : Number(argv[portIndex + 1]);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`--port: expected a TCP port, got ${argv[portIndex + 1]}`);
    const running = await startTestMcpServer({ transport: 'http', port, legacyOnly });
    process.stdout.write(`${running.url}\n`);
    const stop = () => void running.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }
  const shared = sharedState(() => process.exit(1));
  // Exit when the client closes stdin, as a well-behaved stdio server does.
  process.stdin.once('end', () => process.exit(0));
  if (legacyOnly) {
    const server = createTestServer(shared, 'legacy');
    server.server.oninitialized = () => shared.recorder.session();
    await server.connect(new StdioServerTransport());
    return;
  }
  // A stdio process has one connection: opened by `initialize` (2025-11-25) or by `server/discover` (2026-07-28).
  serveStdio(({ era }) => {
    const server = createTestServer(shared, era);
    if (era === 'modern') shared.recorder.session();
    else server.server.oninitialized = () => shared.recorder.session();
    return server;
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`mcp-test-server: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  });
}
