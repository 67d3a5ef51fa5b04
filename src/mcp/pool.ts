import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../shared/errors.js';
import { packageVersion } from '../shared/package-version.js';
import type { JsonObject, ToolDefinition } from '../shared/types.js';
import { callServerTool, type McpCallOptions, type McpToolTarget } from './call-tool.js';
import type { McpConfig, McpServerConfig } from './config.js';
import { McpToolNotConfiguredError, McpTransportError } from './errors.js';
import { ServerConnection, type ConnectionSettings, type McpLogger } from './server-connection.js';
import { toToolDefinitions } from './tool-definitions.js';

export type { McpCallOptions, McpLogger, McpToolTarget };

/**
 * One MCP connection per configured server, shared by every activity in the worker.
 *
 * Connections open on first use (concurrent first callers share one attempt) and are dropped when the transport
 * closes (a stdio server exited), when a request shows the connection is broken, or when an HTTP server no longer
 * knows the session; the next use opens a new one (src/mcp/server-connection.ts). Tool lists are cached per
 * connection and dropped when the server sends `notifications/tools/list_changed`.
 */

/** Default timeout of starting a server (spawn + `initialize`) and of listing its tools. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

export interface McpPoolOptions {
  /** Name and version sent to servers in `initialize`. Default `{ name: 'durable-agent', version: <this package's> }`. */
  clientInfo?: { name: string; version: string };
  /** Timeout of starting a server and of listing its tools, in ms. Default {@link DEFAULT_CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number;
  /**
   * Receives each stderr line of a stdio server. Default: written to the worker's stderr as `[mcp <server>] <line>`.
   * The last lines are also kept and quoted when the server fails to start or dies.
   */
  onServerStderr?: (server: string, line: string) => void;
  /** Default: warnings to `console.warn`, debug messages dropped. */
  logger?: McpLogger;
}

/** What {@link McpPool.status} reports per server, for diagnostics and tests. */
export interface McpServerStatus {
  server: string;
  transport: 'stdio' | 'http';
  disabled: boolean;
  connected: boolean;
  /** How many connections the pool has opened to this server so far. */
  connects: number;
  /** Process id of the running stdio server. */
  pid: number | undefined;
  /** Session id of the current Streamable HTTP connection. */
  sessionId: string | undefined;
}

const defaultLogger: McpLogger = {
  warn: (message, meta) => console.warn(message, meta ?? ''),
  debug: () => undefined,
};

export class McpPool {
  private readonly servers = new Map<string, ServerConnection>();

  constructor(config: McpConfig | McpServerConfig[], options: McpPoolOptions = {}) {
    const settings: ConnectionSettings = {
      clientInfo: options.clientInfo ?? { name: 'durable-agent', version: packageVersion() },
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      onServerStderr: options.onServerStderr ?? ((server, line) => process.stderr.write(`[mcp ${server}] ${line}\n`)),
      logger: options.logger ?? defaultLogger,
    };
    for (const server of Array.isArray(config) ? config : config.servers) {
      this.servers.set(server.name, new ServerConnection(server, settings));
    }
  }

  /** Names of the configured servers that are not disabled. */
  get serverNames(): string[] {
    return this.enabledServers().map((server) => server.config.name);
  }

  /**
   * All tools of all enabled servers, namespaced `server__tool`, with allow/deny applied, in configuration order.
   * Connects to servers that are not connected yet. If any server cannot be reached, fails with an
   * {@link McpTransportError} naming every such server: a turn records its tool list once, so a silently shorter
   * list would hide a server for the whole turn.
   */
  async listTools(): Promise<ToolDefinition[]> {
    const servers = this.enabledServers();
    const results = await Promise.allSettled(servers.map((server) => server.listTools()));
    const failures = results.flatMap((result, index) =>
      result.status === 'rejected' ? [{ server: servers[index]!.config.name, error: result.reason as unknown }] : [],
    );
    if (failures.length > 0) throw listingFailure(failures);
    return toToolDefinitions(
      servers.map((server, index) => ({
        config: server.config,
        tools: (results[index] as PromiseFulfilledResult<Tool[]>).value,
      })),
    );
  }

  /**
   * Call a tool and return the raw MCP result (`isError: true` results included: they are normal results).
   *
   * Throws {@link McpToolNotConfiguredError} when no enabled server offers the tool, {@link McpTransportError} when
   * the server could not be reached or the connection failed (its `requestSent` says whether the tool may have run),
   * `McpProtocolError` when the server answered with a JSON-RPC error, and the signal's reason when aborted.
   */
  async callTool(target: McpToolTarget, args: JsonObject, options: McpCallOptions = {}): Promise<CallToolResult> {
    const server = this.servers.get(target.server);
    if (server === undefined || server.config.disabled) {
      throw new McpToolNotConfiguredError(
        `No MCP server named "${target.server}" is configured${server?.config.disabled ? ' (it is disabled)' : ''}; ` +
          `configured servers: ${this.serverNames.join(', ') || 'none'}.`,
        target.server,
        target.originalName,
      );
    }
    return callServerTool(server, target, args, options);
  }

  /** Per-server connection state, for diagnostics and tests. */
  status(): McpServerStatus[] {
    return [...this.servers.values()].map((server) => ({
      server: server.config.name,
      transport: server.config.transport,
      disabled: server.config.disabled,
      connected: server.connected,
      connects: server.connects,
      pid: server.pid,
      sessionId: server.sessionId,
    }));
  }

  /**
   * Close every connection: stdio servers get their stdin closed, then SIGTERM, then SIGKILL (the SDK waits up to
   * 2 s between steps); HTTP sessions are ended with a DELETE. Later calls fail with a retryable
   * {@link McpTransportError}, so a worker that is shutting down hands the call to another worker.
   */
  async close(): Promise<void> {
    await Promise.all([...this.servers.values()].map((server) => server.close()));
  }

  private enabledServers(): ServerConnection[] {
    return [...this.servers.values()].filter((server) => !server.config.disabled);
  }
}

/** One error for a tool list that some servers could not give, naming each of them (the first is its `server`). */
function listingFailure(failures: Array<{ server: string; error: unknown }>): McpTransportError {
  const message = failures.map(({ error }) => errorMessage(error)).join('; ');
  return new McpTransportError(message, { server: failures[0]!.server, requestSent: false, cause: failures[0]!.error });
}
