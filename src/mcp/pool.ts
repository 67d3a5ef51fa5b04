import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject, ToolAnnotations, ToolDefinition } from '../shared/types.js';
import { isToolAllowed, type McpConfig, type McpServerConfig } from './config.js';
import { describeRequestFailure, McpProtocolError, McpToolNotConfiguredError, McpTransportError } from './errors.js';
import { assignToolNames } from './names.js';
import { errorMessage } from '../shared/errors.js';

/**
 * One MCP connection per configured server, shared by every activity in the worker.
 *
 * Connections open on first use (concurrent first callers share one attempt) and are dropped when the transport
 * closes (a stdio server exited), when a request shows the connection is broken, or when an HTTP server no longer
 * knows the session; the next use opens a new one. Tool lists are cached per connection and dropped when the
 * server sends `notifications/tools/list_changed`.
 */

/** Default timeout of starting a server (spawn + `initialize`) and of listing its tools. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/** Lines of a stdio server's stderr kept to explain why it failed to start or died. */
const STDERR_TAIL_LINES = 20;

/** The logging the pool needs; Temporal's `Runtime.instance().logger` and `console` both fit. */
export interface McpLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
  debug(message: string, meta?: Record<string, unknown>): void;
}

export interface McpPoolOptions {
  /** Name and version sent to servers in `initialize`. Default `{ name: 'durable-agent', version: '0.1.0' }`. */
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

/** A tool to call: a definition from {@link McpPool.listTools} (or the workflow's copy of one), or its name. */
export type McpToolTarget = string | (Pick<ToolDefinition, 'server' | 'originalName'> & Partial<ToolDefinition>);

export interface McpCallOptions {
  /** Aborting it cancels the request: the SDK sends `notifications/cancelled` and the call rejects with its reason. */
  signal?: AbortSignal;
  /** Called with each progress notification of the call. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /**
   * Called after the connection is ready and the tool is known, right before the request is written. After this
   * point a failure may mean the tool ran. Called again if the pool re-sends on a fresh session.
   */
  beforeSend?: () => void;
  /** Timeout of this call in ms. Default: the definition's `timeoutMs`, else the server's configured `timeoutMs`. */
  timeoutMs?: number;
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

interface Connection {
  client: Client;
  transport: StdioClientTransport | StreamableHTTPClientTransport;
  closed: boolean;
  /** The server's tools (allow/deny applied); dropped on `tools/list_changed`. */
  tools: Promise<Tool[]> | undefined;
  stderrTail: string[];
}

interface Slot {
  config: McpServerConfig;
  connection: Connection | undefined;
  connecting: Promise<Connection> | undefined;
  connects: number;
}

const defaultLogger: McpLogger = {
  warn: (message, meta) => console.warn(message, meta ?? ''),
  debug: () => undefined,
};

export class McpPool {
  private readonly slots = new Map<string, Slot>();
  private readonly options: Required<McpPoolOptions>;
  /** Model-facing name → tool, as of the last {@link listTools}. */
  private toolsByName = new Map<string, ToolDefinition>();
  private closed = false;

  constructor(config: McpConfig | McpServerConfig[], options: McpPoolOptions = {}) {
    const servers = Array.isArray(config) ? config : config.servers;
    for (const server of servers) {
      this.slots.set(server.name, { config: server, connection: undefined, connecting: undefined, connects: 0 });
    }
    this.options = {
      clientInfo: options.clientInfo ?? { name: 'durable-agent', version: '0.1.0' },
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      onServerStderr: options.onServerStderr ?? ((server, line) => process.stderr.write(`[mcp ${server}] ${line}\n`)),
      logger: options.logger ?? defaultLogger,
    };
  }

  /** Names of the configured servers that are not disabled. */
  get serverNames(): string[] {
    return [...this.slots.values()].filter((slot) => !slot.config.disabled).map((slot) => slot.config.name);
  }

  /**
   * All tools of all enabled servers, namespaced `server__tool`, with allow/deny applied, in configuration order.
   * Connects to servers that are not connected yet. If any server cannot be reached, fails with an
   * {@link McpTransportError} naming every such server: a turn records its tool list once, so a silently shorter
   * list would hide a server for the whole turn.
   */
  async listTools(): Promise<ToolDefinition[]> {
    const slots = [...this.slots.values()].filter((slot) => !slot.config.disabled);
    const results = await Promise.allSettled(slots.map((slot) => this.serverTools(slot)));
    const failures = results.flatMap((result, index) =>
      result.status === 'rejected' ? [{ server: slots[index]!.config.name, error: result.reason as unknown }] : [],
    );
    if (failures.length > 0) {
      const message = failures.map(({ error }) => errorMessage(error)).join('; ');
      throw new McpTransportError(message, {
        server: failures[0]!.server,
        requestSent: false,
        cause: failures[0]!.error,
      });
    }
    const entries = slots.flatMap((slot, index) => {
      const tools = (results[index] as PromiseFulfilledResult<Tool[]>).value;
      return tools.map((tool) => ({ slot, tool }));
    });
    const names = assignToolNames(entries.map(({ slot, tool }) => ({ server: slot.config.name, tool: tool.name })));
    const definitions = entries.map(({ slot, tool }, index) => toToolDefinition(names[index]!, slot.config, tool));
    this.toolsByName = new Map(definitions.map((definition) => [definition.name, definition]));
    return definitions;
  }

  /**
   * Call a tool and return the raw MCP result (`isError: true` results included: they are normal results).
   *
   * Throws {@link McpToolNotConfiguredError} when no enabled server offers the tool, {@link McpTransportError} when
   * the server could not be reached or the connection failed (its `requestSent` says whether the tool may have run),
   * {@link McpProtocolError} when the server answered with a JSON-RPC error, and the signal's reason when aborted.
   */
  async callTool(target: McpToolTarget, args: JsonObject, options: McpCallOptions = {}): Promise<CallToolResult> {
    const { server, tool, definition } = await this.resolveTarget(target);
    const slot = this.slots.get(server);
    if (slot === undefined || slot.config.disabled) {
      throw new McpToolNotConfiguredError(
        `No MCP server named "${server}" is configured${slot?.config.disabled ? ' (it is disabled)' : ''}; ` +
          `configured servers: ${this.serverNames.join(', ') || 'none'}.`,
        server,
        tool,
      );
    }
    if (!isToolAllowed(slot.config, tool)) {
      throw new McpToolNotConfiguredError(
        `Tool "${tool}" of MCP server "${server}" is excluded by its allowTools/denyTools configuration.`,
        server,
        tool,
      );
    }
    const timeoutMs = options.timeoutMs ?? definition?.timeoutMs ?? slot.config.timeoutMs;
    // One transparent re-send: when a reused connection turns out to be gone before the request reached the server
    // (stdio process exited, HTTP session forgotten), nothing ran, so a fresh connection can safely try again.
    for (let attempt = 1; ; attempt += 1) {
      options.signal?.throwIfAborted();
      const reused = slot.connection !== undefined && !slot.connection.closed;
      // Starting a server can take seconds; a cancelled call should not wait for it (the start goes on for others).
      const connection = await untilAborted(this.connection(slot), options.signal);
      const tools = await untilAborted(this.connectionTools(slot, connection), options.signal);
      if (!tools.some((candidate) => candidate.name === tool)) {
        throw new McpToolNotConfiguredError(
          `MCP server "${server}" does not offer a tool "${tool}" any more; it offers: ` +
            `${tools.map((candidate) => candidate.name).join(', ') || 'no tools'}.`,
          server,
          tool,
        );
      }
      options.beforeSend?.();
      const link = linkSignal(options.signal);
      try {
        return (await connection.client.callTool({ name: tool, arguments: args }, undefined, {
          signal: link.signal,
          timeout: timeoutMs,
          onprogress: options.onProgress,
          // The activity's start-to-close timeout is derived from `timeoutMs`: a call kept alive by progress
          // notifications past it would be cut by Temporal anyway, so progress does not extend the timeout.
          resetTimeoutOnProgress: false,
        })) as CallToolResult;
      } catch (error) {
        if (options.signal?.aborted) throw options.signal.reason ?? error;
        const failure = describeRequestFailure(error);
        const where = `MCP server "${server}", tool "${tool}"`;
        switch (failure.kind) {
          case 'protocol':
            throw new McpProtocolError(
              `${where} answered with error ${failure.code}: ${protocolErrorText(error)}`,
              server,
              failure.code,
            );
          case 'session_lost':
          case 'not_sent':
            this.discard(slot, connection, `request failed before reaching the server: ${errorMessage(error)}`);
            if (reused && attempt === 1 && (failure.kind === 'session_lost' || failure.retryable)) continue;
            throw new McpTransportError(`${where}: the request did not reach the server: ${errorMessage(error)}`, {
              server,
              requestSent: false,
              retryable: failure.kind === 'session_lost' || failure.retryable,
              cause: error,
            });
          case 'sent':
            if (failure.connectionBroken) this.discard(slot, connection, `connection broke: ${errorMessage(error)}`);
            throw new McpTransportError(
              failure.timedOut
                ? `${where}: no answer within ${timeoutMs} ms`
                : `${where}: the connection failed during the call: ${errorMessage(error)}${stderrHint(connection)}`,
              { server, requestSent: true, timedOut: failure.timedOut, cause: error },
            );
        }
      } finally {
        link.release();
      }
    }
  }

  /** Per-server connection state, for diagnostics and tests. */
  status(): McpServerStatus[] {
    return [...this.slots.values()].map((slot) => {
      const connection = slot.connection;
      const transport = connection?.transport;
      return {
        server: slot.config.name,
        transport: slot.config.transport,
        disabled: slot.config.disabled,
        connected: connection !== undefined && !connection.closed,
        connects: slot.connects,
        pid: transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined,
        sessionId: transport instanceof StreamableHTTPClientTransport ? transport.sessionId : undefined,
      };
    });
  }

  /**
   * Close every connection: stdio servers get their stdin closed, then SIGTERM, then SIGKILL (the SDK waits up to
   * 2 s between steps); HTTP sessions are ended with a DELETE. Later calls fail with a retryable
   * {@link McpTransportError}, so a worker that is shutting down hands the call to another worker.
   */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.slots.values()].map(async (slot) => {
        const connection = slot.connection ?? (await slot.connecting?.catch(() => undefined));
        slot.connection = undefined;
        if (connection !== undefined) await closeConnection(connection);
      }),
    );
  }

  private async resolveTarget(
    target: McpToolTarget,
  ): Promise<{ server: string; tool: string; definition: Partial<ToolDefinition> | undefined }> {
    if (typeof target !== 'string') return { server: target.server, tool: target.originalName, definition: target };
    let definition = this.toolsByName.get(target);
    if (definition === undefined) {
      await this.listTools();
      definition = this.toolsByName.get(target);
    }
    if (definition === undefined) {
      throw new McpToolNotConfiguredError(
        `No MCP tool named "${target}"; available tools: ${[...this.toolsByName.keys()].join(', ') || 'none'}.`,
        '',
        target,
      );
    }
    return { server: definition.server, tool: definition.originalName, definition };
  }

  private async serverTools(slot: Slot): Promise<Tool[]> {
    return this.connectionTools(slot, await this.connection(slot));
  }

  private connectionTools(slot: Slot, connection: Connection): Promise<Tool[]> {
    if (connection.tools !== undefined) return connection.tools;
    const promise = listAllTools(connection.client, this.options.connectTimeoutMs).then(
      (tools) => tools.filter((tool) => isToolAllowed(slot.config, tool.name)),
      (error: unknown) => {
        if (connection.tools === promise) connection.tools = undefined;
        const broken = describeRequestFailure(error).kind !== 'protocol';
        if (broken) this.discard(slot, connection, `listing tools failed: ${errorMessage(error)}`);
        throw new McpTransportError(
          `MCP server "${slot.config.name}" could not list its tools: ${errorMessage(error)}${stderrHint(connection)}`,
          { server: slot.config.name, requestSent: false, cause: error },
        );
      },
    );
    connection.tools = promise;
    return promise;
  }

  private connection(slot: Slot): Promise<Connection> {
    if (this.closed) {
      return Promise.reject(
        new McpTransportError(`The MCP pool is closed (worker shutting down); "${slot.config.name}" not reachable.`, {
          server: slot.config.name,
          requestSent: false,
        }),
      );
    }
    if (slot.connection !== undefined && !slot.connection.closed) return Promise.resolve(slot.connection);
    slot.connecting ??= this.connect(slot).finally(() => {
      slot.connecting = undefined;
    });
    return slot.connecting;
  }

  private async connect(slot: Slot): Promise<Connection> {
    const config = slot.config;
    const client = new Client(this.options.clientInfo, { capabilities: {} });
    const transport =
      config.transport === 'stdio'
        ? new StdioClientTransport({
            command: config.command,
            args: config.args,
            env: config.env,
            cwd: config.cwd,
            stderr: 'pipe',
          })
        : new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
    const connection: Connection = { client, transport, closed: false, tools: undefined, stderrTail: [] };
    if (transport instanceof StdioClientTransport) this.collectStderr(config.name, transport, connection);
    client.onclose = () => {
      connection.closed = true;
      if (slot.connection === connection) {
        slot.connection = undefined;
        this.options.logger.debug(`MCP server "${config.name}" disconnected; the next call reconnects.`);
      }
    };
    client.onerror = (error) => this.options.logger.debug(`MCP server "${config.name}": ${errorMessage(error)}`);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      connection.tools = undefined;
      this.options.logger.debug(`MCP server "${config.name}" changed its tool list.`);
    });
    slot.connects += 1;
    try {
      await client.connect(transport, { timeout: this.options.connectTimeoutMs });
    } catch (error) {
      await closeConnection(connection);
      const target = config.transport === 'stdio' ? `start "${config.command}"` : `reach ${config.url}`;
      throw new McpTransportError(
        `MCP server "${config.name}": could not ${target}: ${errorMessage(error)}${stderrHint(connection)}`,
        { server: config.name, requestSent: false, cause: error },
      );
    }
    if (this.closed) {
      await closeConnection(connection);
      throw new McpTransportError(`The MCP pool closed while "${config.name}" was starting.`, {
        server: config.name,
        requestSent: false,
      });
    }
    slot.connection = connection;
    return connection;
  }

  private collectStderr(server: string, transport: StdioClientTransport, connection: Connection): void {
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        connection.stderrTail.push(line);
        if (connection.stderrTail.length > STDERR_TAIL_LINES) connection.stderrTail.shift();
        this.options.onServerStderr(server, line);
      }
    });
  }

  /** Forget a broken connection (if it is still the current one) and close it in the background. */
  private discard(slot: Slot, connection: Connection, reason: string): void {
    if (slot.connection === connection) {
      slot.connection = undefined;
      this.options.logger.warn(`MCP server "${slot.config.name}": dropping the connection, ${reason}`);
    }
    connection.closed = true;
    void closeConnection(connection);
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/**
 * A signal for one request that follows the caller's. The SDK never removes the abort listener it adds to a request's
 * signal, so handing it a long-lived signal (one per worker, say) would pile up a listener per call.
 */
function linkSignal(signal: AbortSignal | undefined): { signal: AbortSignal | undefined; release: () => void } {
  if (signal === undefined) return { signal: undefined, release: () => undefined };
  const controller = new AbortController();
  const abort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', abort, { once: true });
  return { signal: controller.signal, release: () => signal.removeEventListener('abort', abort) };
}

async function listAllTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  // A server without the tools capability (prompts or resources only) would answer "method not found".
  if (client.getServerCapabilities()?.tools === undefined) return [];
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

async function closeConnection(connection: Connection): Promise<void> {
  connection.closed = true;
  const transport = connection.transport;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
    // Ending the session frees it on the server; a server that is gone must not hold up the shutdown.
    await Promise.race([
      transport.terminateSession().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 1000).unref()),
    ]);
  }
  await connection.client.close().catch(() => undefined);
}

/** The server's own words: the SDK prefixes `MCP error <code>: `, once per hop (so twice when a server re-throws). */
function protocolErrorText(error: unknown): string {
  return errorMessage(error).replace(/^(MCP error -?\d+: )+/, '');
}

function stderrHint(connection: Connection): string {
  const tail = connection.stderrTail.filter((line) => line.trim() !== '').slice(-5);
  return tail.length === 0 ? '' : `. Server stderr (last lines): ${tail.join(' | ')}`;
}

function toToolDefinition(name: string, config: McpServerConfig, tool: Tool): ToolDefinition {
  const annotations: ToolAnnotations = {};
  for (const key of ['readOnlyHint', 'idempotentHint', 'destructiveHint', 'openWorldHint'] as const) {
    const value = tool.annotations?.[key];
    if (typeof value === 'boolean') annotations[key] = value;
  }
  return {
    name,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
    // Round-trip through JSON so only plain data crosses into workflow history.
    inputSchema: JSON.parse(JSON.stringify(tool.inputSchema)) as JsonObject,
    annotations,
    server: config.name,
    originalName: tool.name,
    timeoutMs: config.timeoutMs,
  };
}
