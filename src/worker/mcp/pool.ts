import type { CallToolResult, InputRequiredResult, Tool } from '@modelcontextprotocol/client';
import { packageVersion } from '../../node/package-version.js';
import type { JsonObject, ToolDefinition, ToolQuestionAnswer, UnavailableServer } from '../../shared/types.js';
import { callServerTool, type McpCallOptions, type McpInputRounds, type McpToolTarget } from './call-tool.js';
import type { McpConfig, McpServerConfig } from './config.js';
import { McpToolNotConfiguredError } from './errors.js';
import { defaultTokenDirectory, FileTokenStore, type McpTokenStore } from './oauth/token-store.js';
import { DEFAULT_OUTAGE_BACKOFF_MS, DEFAULT_OUTAGE_MAX_BACKOFF_MS } from './outages.js';
import { Redactor } from '../../shared/redaction.js';
import { ServerConnection, type ConnectionSettings, type McpLogger } from './server-connection.js';
import { toToolDefinitions } from './tool-definitions.js';
import type { ToolTask } from '../../shared/tool-tasks.js';
import {
  answerTask,
  cancelTask,
  getTask,
  lookAtTask,
  taskResult,
  type TaskLook,
  type TaskPayload,
  type TaskRef,
} from './tasks.js';

export type { McpCallOptions, McpInputRounds, McpLogger, McpToolTarget };

/**
 * One MCP connection per configured server, shared by every activity in the worker.
 *
 * Connections open on first use (concurrent first callers share one attempt) and are dropped when the transport
 * closes (a stdio server exited), when a request shows the connection is broken, or when an HTTP server no longer
 * knows the session; the next use opens a new one (src/worker/mcp/server-connection.ts). Tool lists are cached per
 * connection for calls, dropped when the server sends `notifications/tools/list_changed`, and listed afresh for every
 * turn (`listTools`).
 *
 * Everything the pool returns or throws has the server's secrets redacted (src/worker/mcp/redaction.ts): it reaches workflow
 * history, stream events and the model.
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
  /** Default: warnings to `console.warn`, info to `console.info`, debug messages dropped. */
  logger?: McpLogger;
  /**
   * After a server fails to be listed, `listTools` leaves it out without trying it again for this long, doubled per
   * failure in a row up to `outageMaxBackoffMs`. Defaults {@link DEFAULT_OUTAGE_BACKOFF_MS} and
   * {@link DEFAULT_OUTAGE_MAX_BACKOFF_MS}.
   */
  outageBackoffMs?: number;
  outageMaxBackoffMs?: number;
  /**
   * Where the logins of servers with `"oauth": {"grant": "authorization_code"}` are kept. Default a
   * {@link FileTokenStore} in {@link defaultTokenDirectory} (`DURABLE_AGENT_TOKEN_DIR`).
   */
  tokenStore?: McpTokenStore;
}

/** A turn's tools: those of every enabled server that could be listed, and the servers that could not. */
export interface ToolListing {
  tools: ToolDefinition[];
  /** In configuration order; `reason` is the redacted error of the last attempt. */
  unavailable: UnavailableServer[];
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
  /** Session id of the current Streamable HTTP connection (none at 2026-07-28, which has no sessions). */
  sessionId: string | undefined;
  /** The MCP revision the open connection speaks, e.g. `2026-07-28` or `2025-11-25`. */
  protocolVersion: string | undefined;
  /** Why the last listing failed, while the server is down. */
  unavailable: string | undefined;
}

const defaultLogger: McpLogger = {
  warn: (message, meta) => console.warn(message, meta ?? ''),
  info: (message, meta) => console.info(message, meta ?? ''),
  debug: () => undefined,
};

export class McpPool {
  /**
   * The secrets of every configured server, for the worker to redact from everything it sends (src/shared/redaction.ts).
   * A credential the pool obtains while it runs (an OAuth token) is registered with {@link addSecret}.
   */
  readonly secrets = new Redactor();
  private readonly servers = new Map<string, ServerConnection>();

  constructor(config: McpConfig | McpServerConfig[], options: McpPoolOptions = {}) {
    const logger = options.logger ?? defaultLogger;
    const settings: ConnectionSettings = {
      clientInfo: options.clientInfo ?? { name: 'durable-agent', version: packageVersion() },
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      onServerStderr: options.onServerStderr ?? ((server, line) => process.stderr.write(`[mcp ${server}] ${line}\n`)),
      logger: {
        warn: (message, meta) => logger.warn(message, meta),
        info: (message, meta) => (logger.info ?? logger.warn).call(logger, message, meta),
        debug: (message, meta) => logger.debug(message, meta),
      },
      outageBackoffMs: options.outageBackoffMs ?? DEFAULT_OUTAGE_BACKOFF_MS,
      outageMaxBackoffMs: options.outageMaxBackoffMs ?? DEFAULT_OUTAGE_MAX_BACKOFF_MS,
      now: () => Date.now(),
      tokenStore: options.tokenStore ?? new FileTokenStore(defaultTokenDirectory()),
      addSecret: (server, value, label) => this.addSecret(server, value, label),
    };
    for (const server of Array.isArray(config) ? config : config.servers) {
      const connection = new ServerConnection(server, settings);
      this.servers.set(server.name, connection);
      this.secrets.include(connection.redactor);
    }
  }

  /**
   * Register a credential of `server` obtained while the worker runs (an OAuth access or refresh token): from now on
   * it is replaced by `label` in what the pool reports for that server and in everything the worker sends.
   */
  addSecret(server: string, value: string, label = '[token]'): void {
    this.servers.get(server)?.redactor.add(value, label);
    this.secrets.add(value, label);
  }

  /** Names of the configured servers that are not disabled. */
  get serverNames(): string[] {
    return this.enabledServers().map((server) => server.config.name);
  }

  /**
   * The tools for a turn: all tools of all enabled servers, namespaced `server__tool`, with allow/deny applied, in
   * configuration order. Every server is listed afresh (one `tools/list` per connected server; servers not connected
   * yet are started or connected), in parallel. Never fails: a server that cannot be started, reached or listed is
   * left out and named in `unavailable` with the reason, and is not tried again before its backoff has run out
   * (src/worker/mcp/outages.ts), so one broken server costs the others nothing.
   */
  async listTools(): Promise<ToolListing> {
    const servers = this.enabledServers();
    const listings = await Promise.all(servers.map((server) => server.listForTurn()));
    const listed: Array<{ config: McpServerConfig; tools: Tool[] }> = [];
    const unavailable: UnavailableServer[] = [];
    listings.forEach((listing, index) => {
      const server = servers[index]!;
      if ('tools' in listing) listed.push({ config: server.config, tools: listing.tools });
      else unavailable.push({ server: server.config.name, reason: server.redactor.text(listing.unavailable) });
    });
    return { tools: toToolDefinitions(listed), unavailable };
  }

  /**
   * Call a tool and return the raw MCP result (`isError: true` results included: they are normal results).
   *
   * Throws {@link McpToolNotConfiguredError} when no enabled server offers the tool, {@link McpTransportError} when
   * the server could not be reached or the connection failed (its `requestSent` says whether the tool may have run),
   * `McpProtocolError` when the server answered with a JSON-RPC error, and the signal's reason when aborted.
   */
  /**
   * With `acceptTasks` or `task`, a task the server answers with comes back as `{ task }` (./task-extension.ts for
   * 2026-07-28 servers, ./tasks.ts for 2025-11-25 ones); the workflow asks about it later.
   */
  callTool(
    target: McpToolTarget,
    args: JsonObject,
    options: McpCallOptions & ({ acceptTasks: true } | { task: true }),
  ): Promise<CallToolResult | InputRequiredResult | { task: ToolTask }>;
  callTool(target: McpToolTarget, args: JsonObject, options?: McpCallOptions): Promise<CallToolResult>;
  /** With `rounds`, a 2026-07-28 server's `input_required` answer comes back as the result (../activities/tools). */
  callTool(
    target: McpToolTarget,
    args: JsonObject,
    options: McpCallOptions & { rounds: McpInputRounds },
  ): Promise<CallToolResult | InputRequiredResult>;
  async callTool(
    target: McpToolTarget,
    args: JsonObject,
    options: McpCallOptions = {},
  ): Promise<CallToolResult | InputRequiredResult | { task: ToolTask }> {
    const server = this.serverOf(target);
    try {
      return await callServerTool(server, target, args, options);
    } catch (error) {
      throw server.redactor.error(error);
    }
  }

  /**
   * Requests about a task that a call with `task` created (docs/mcp.md, "Tasks"), sent to the session it lives in:
   * `tasks/get` (`look`: with a 2026-07-28 task's questions), `tasks/result` (which also carries a 2025-11-25 task's
   * questions to `onElicitation`), `tasks/update` (`answer`: a 2026-07-28 task's answers), `tasks/cancel`. They
   * throw `TaskRefusedError` when the server does not know the task, and a retryable {@link McpTransportError} when it
   * could not be asked.
   */
  readonly tasks = {
    get: (target: McpToolTarget, task: TaskRef, timeoutMs?: number): Promise<ToolTask> =>
      this.redacted(target, (server) => getTask(server, task, timeoutMs ?? server.config.timeoutMs)),
    look: (target: McpToolTarget, task: TaskRef, timeoutMs?: number): Promise<TaskLook> =>
      this.redacted(target, (server) => lookAtTask(server, task, timeoutMs ?? server.config.timeoutMs)),
    answer: (
      target: McpToolTarget,
      task: TaskRef,
      inputResponses: Record<string, ToolQuestionAnswer>,
      timeoutMs?: number,
    ): Promise<void> =>
      this.redacted(target, (server) => answerTask(server, task, inputResponses, timeoutMs ?? server.config.timeoutMs)),
    result: (target: McpToolTarget, task: TaskRef, options: Parameters<typeof taskResult>[2]): Promise<TaskPayload> =>
      this.redacted(target, (server) => taskResult(server, task, options)),
    cancel: (target: McpToolTarget, task: TaskRef, timeoutMs?: number): Promise<void> =>
      this.redacted(target, (server) => cancelTask(server, task, timeoutMs ?? server.config.timeoutMs)),
  };

  private async redacted<T>(target: McpToolTarget, request: (server: ServerConnection) => Promise<T>): Promise<T> {
    const server = this.serverOf(target);
    try {
      return await request(server);
    } catch (error) {
      throw server.redactor.error(error);
    }
  }

  private serverOf(target: McpToolTarget): ServerConnection {
    const server = this.servers.get(target.server);
    if (server === undefined || server.config.disabled) {
      throw new McpToolNotConfiguredError(
        `No MCP server named "${target.server}" is configured${server?.config.disabled ? ' (it is disabled)' : ''}; ` +
          `configured servers: ${this.serverNames.join(', ') || 'none'}.`,
        target.server,
        target.originalName,
      );
    }
    return server;
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
      protocolVersion: server.protocolVersion,
      unavailable: server.outage === undefined ? undefined : server.redactor.text(server.outage.reason),
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
