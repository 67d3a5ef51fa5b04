import { Client, type PriorDiscovery, StreamableHTTPClientTransport, type Tool } from '@modelcontextprotocol/client';
import {
  closedDuringProbe,
  EraMemory,
  InPlaceStdioClientTransport,
  probes,
  versionNegotiationFor,
} from './protocol-era.js';
import { errorMessage } from '../../shared/errors.js';
import { isToolAllowed, type McpServerConfig } from './config.js';
import { connectFailure, couldNotReach, listingFailure } from './connection-failures.js';
import { type CallInFlight, ELICITATION_CAPABILITY, routeElicitation } from './elicitation.js';
import { describeRequestFailure, networkErrorCode } from './errors.js';
import { readTaskAnswer } from './task-answer.js';
import { McpAuthorizationRequiredError } from './errors.js';
import { McpOAuthProvider } from './oauth/provider.js';
import type { McpTokenStore } from './oauth/token-store.js';
import { ServerOutages, type Outage } from './outages.js';
import { redactorFor, type Redactor } from './redaction.js';
import { isOwnProgressTokenError, ProgressRoutes } from './progress.js';
import { readMissingResultTypeAsComplete } from './result-type.js';
import { listAllTools } from './tool-definitions.js';
import { StandaloneStream } from './standalone-stream.js';

/** A session resumed by id has been initialized already (the 2025-11-25 `initialize` session). */
const LEGACY: PriorDiscovery = { kind: 'legacy' };

/** Lines of a stdio server's stderr kept to explain why it failed to start or died. */
const STDERR_TAIL_LINES = 20;

/** The logging the pool needs; Temporal's `Runtime.instance().logger` and `console` both fit. */
export interface McpLogger {
  warn(message: string, meta?: Record<string, unknown>): void;
  /** Default: `warn`. */
  info?(message: string, meta?: Record<string, unknown>): void;
  debug(message: string, meta?: Record<string, unknown>): void;
}

/** What the connections of one pool share (the pool's options with their defaults applied). */
export interface ConnectionSettings {
  clientInfo: { name: string; version: string };
  connectTimeoutMs: number;
  onServerStderr: (server: string, line: string) => void;
  logger: Required<McpLogger>;
  /** Backoff of the tool listing after a server's first failure in a row, doubled per failure up to the max. */
  outageBackoffMs: number;
  outageMaxBackoffMs: number;
  now: () => number;
  /** Where logins of `authorization_code` servers are kept (src/worker/mcp/oauth/token-store.ts). */
  tokenStore: McpTokenStore;
  /** Registers a credential obtained while the worker runs (an OAuth token) for redaction (`McpPool.addSecret`). */
  addSecret: (server: string, value: string, label: string) => void;
}

/** What a turn's listing got from one server: its tools, or why it is left out. */
export type ServerListing = { tools: Tool[] } | { unavailable: string };

/** One initialized MCP session with a server: a started process (stdio) or an HTTP session. */
export interface Session {
  client: Client;
  transport: InPlaceStdioClientTransport | StreamableHTTPClientTransport;
  closed: boolean;
  /** The server's tools (allow/deny applied); dropped on `tools/list_changed`. */
  tools: Promise<Tool[]> | undefined;
  stderrTail: string[];
  /** The tool calls in flight on this session: a server's question goes to the one in flight (./elicitation.ts). */
  calls: Set<CallInFlight>;
  /** Where the progress notifications of this session's calls go (./progress.ts). */
  progress: ProgressRoutes;
  /** Streamable HTTP only: the stream of the server's messages outside responses (./standalone-stream.ts). */
  standalone?: StandaloneStream;
}

/**
 * The connection to one configured server over the worker's life. A session is opened on first use (concurrent first
 * callers share one attempt) and dropped when the transport closes (a stdio server exited) or when a caller finds it
 * broken ({@link discard}); the next use opens a new one. The tool list is cached per session for calls, and listed
 * afresh for each turn ({@link listForTurn}).
 *
 * Its secrets never leave it unredacted: its log lines and forwarded stderr go through {@link redactor} here, and the
 * pool passes everything it returns or throws for this server through it (src/worker/mcp/redaction.ts).
 */
export class ServerConnection {
  /** How many sessions have been opened so far. */
  connects = 0;
  readonly redactor: Redactor;
  /** The OAuth client of a server with an `oauth` config; it outlives sessions, so tokens do too. */
  private readonly oauth: McpOAuthProvider | undefined;
  private readonly outages: ServerOutages;
  private readonly log: Required<McpLogger>;
  private session: Session | undefined;
  /** Stdio servers that are probed only: what the server speaks, once known (./protocol-era.ts). */
  private readonly era: EraMemory | undefined;
  private opening: Promise<Session> | undefined;
  /** The session whose `initialize` is under way: closing the pool stops it rather than waiting out its timeout. */
  private connecting: Session | undefined;
  private closed = false;

  constructor(
    readonly config: McpServerConfig,
    private readonly settings: ConnectionSettings,
  ) {
    const redactor = redactorFor(config);
    this.redactor = redactor;
    this.era = config.transport === 'stdio' && probes(config) ? new EraMemory() : undefined;
    this.oauth =
      config.transport === 'http' && config.oauth !== undefined
        ? new McpOAuthProvider(
            { name: config.name, url: config.url, oauth: config.oauth },
            settings.tokenStore,
            { kind: 'worker' },
            (value, label) => settings.addSecret(config.name, value, label),
          )
        : undefined;
    const { logger } = settings;
    this.log = {
      warn: (message, meta) => logger.warn(redactor.text(message), meta),
      info: (message, meta) => logger.info(redactor.text(message), meta),
      debug: (message, meta) => logger.debug(redactor.text(message), meta),
    };
    const name = config.name;
    this.outages = new ServerOutages({
      backoffMs: settings.outageBackoffMs,
      maxBackoffMs: settings.outageMaxBackoffMs,
      now: settings.now,
      onDown: (reason, retryInMs) =>
        this.log.warn(
          `MCP server "${name}" is unavailable; its tools are left out of turns until it answers again ` +
            `(next try in ${Math.round(retryInMs / 1000)} s or later): ${reason}`,
        ),
      onBack: (downForMs, failures) =>
        this.log.info(
          `MCP server "${name}" is available again after ${Math.round(downForMs / 1000)} s ` +
            `(${failures} failed attempt${failures === 1 ? '' : 's'}); its tools are offered again.`,
        ),
    });
  }

  /** The current outage (the last listing failed), if any. */
  get outage(): Outage | undefined {
    return this.outages.current;
  }

  /** True while there is an open session to reuse. */
  get connected(): boolean {
    return this.session !== undefined && !this.session.closed;
  }

  /** Process id of the running stdio server. */
  get pid(): number | undefined {
    const transport = this.session?.transport;
    return transport instanceof InPlaceStdioClientTransport ? (transport.pid ?? undefined) : undefined;
  }

  /** The MCP revision the open connection speaks: `2026-07-28` without a session, or an older one with `initialize`. */
  get protocolVersion(): string | undefined {
    return this.session?.client.getNegotiatedProtocolVersion();
  }

  /** Session id of the current Streamable HTTP session. */
  get sessionId(): string | undefined {
    const transport = this.session?.transport;
    return transport instanceof StreamableHTTPClientTransport ? transport.sessionId : undefined;
  }

  /** The open session, or a new one. Fails with the error of {@link couldNotReach}. */
  open(): Promise<Session> {
    if (this.closed) {
      return Promise.reject(couldNotReach(this.config, 'the MCP pool is closed (the worker is shutting down)'));
    }
    if (this.session !== undefined && !this.session.closed) return Promise.resolve(this.session);
    this.opening ??= this.connect().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /**
   * The server's tools for a turn, or why it is left out of the turn. Never fails: a server that cannot be started,
   * reached or listed is reported unavailable, and not tried again by later listings until its backoff has run out
   * (src/worker/mcp/outages.ts).
   *
   * An open session is listed again (one `tools/list` round trip) rather than trusted: an HTTP server that was
   * restarted or redeployed may offer other tools, and may not know the session any more. A session that turns out to
   * be gone is replaced once, at once: listing has no side effect.
   */
  async listForTurn(): Promise<ServerListing> {
    const outage = this.outages.current;
    if (outage !== undefined && !this.outages.mayTry()) return { unavailable: outage.reason };
    try {
      const tools = await this.freshTools();
      this.outages.succeeded();
      return { tools };
    } catch (error) {
      const reason = errorMessage(error);
      // A worker that is shutting down has not seen the server fail.
      if (!this.closed) this.outages.failed(reason);
      return { unavailable: reason };
    }
  }

  private async freshTools(): Promise<Tool[]> {
    const reused = this.connected;
    const session = await this.open();
    if (!reused) return this.sessionTools(session);
    try {
      return await this.sessionTools(session, { fresh: true });
    } catch (error) {
      // Still open: the server answered the listing with an error, which a new session would not change.
      if (!session.closed) throw error;
      return this.sessionTools(await this.open());
    }
  }

  /**
   * The tools of `session`, listed (all pages) once per session, again after `tools/list_changed`, and again when
   * `fresh`. A failure to list drops the session unless the server answered with an error, and always fails as "not
   * sent".
   */
  sessionTools(session: Session, options: { fresh?: boolean } = {}): Promise<Tool[]> {
    if (session.tools !== undefined && options.fresh !== true) return session.tools;
    const promise = listAllTools(session.client, this.settings.connectTimeoutMs).then(
      (tools) => tools.filter((tool) => isToolAllowed(this.config, tool.name)),
      (error: unknown) => {
        if (session.tools === promise) session.tools = undefined;
        const failure = describeRequestFailure(error);
        if (failure.kind !== 'protocol') this.discard(session, `listing tools failed: ${errorMessage(error)}`);
        throw listingFailure(this.config, failure, error, stderrHint(session));
      },
    );
    session.tools = promise;
    return promise;
  }

  /**
   * A 2025-11-25 HTTP session the server still keeps, by its id: another worker's, or this one's before it restarted.
   * An MCP task lives in the session that created it (./tasks.ts), so requests about it go there. No `initialize`: the
   * session has had one; closing it does not end the session on the server (`close` of the SDK sends no DELETE).
   */
  async resumeSession(sessionId: string): Promise<Session> {
    if (this.config.transport !== 'http') throw new Error(`MCP server "${this.config.name}" has no HTTP sessions`);
    const session = this.createSession({ sessionId });
    await session.client.connect(session.transport, { timeout: this.settings.connectTimeoutMs, prior: LEGACY });
    (session.transport as StreamableHTTPClientTransport).setProtocolVersion('2025-11-25');
    return session;
  }

  /** Forget a broken session (if it is still the current one) and close it in the background. */
  discard(session: Session, reason: string): void {
    if (this.session === session) {
      this.session = undefined;
      this.log.warn(`MCP server "${this.config.name}": dropping the connection, ${reason}`);
    }
    session.closed = true;
    void closeSession(session);
  }

  /** Close the session (also one still opening); later uses fail with a retryable "not sent" error. */
  async close(): Promise<void> {
    this.closed = true;
    // Its transport, not its client: the client owns the transport only once `initialize` has been answered, so
    // closing the client would leave the start to run out its timeout.
    if (this.connecting !== undefined) await this.connecting.transport.close().catch(() => undefined);
    const session = this.session ?? (await this.opening?.catch(() => undefined));
    this.session = undefined;
    if (session !== undefined) await closeSession(session);
  }

  private async connect(): Promise<Session> {
    if (await this.oauth?.needsLogin()) {
      throw new McpAuthorizationRequiredError(
        this.config.name,
        `no login is stored in ${this.settings.tokenStore.description}`,
      );
    }
    const prior = this.era?.prior;
    const session = await this.connectSession(prior).catch((error: unknown) => {
      if (this.closed) throw couldNotReach(this.config, 'the MCP pool closed meanwhile (the worker is shutting down)');
      if (this.mayFallBack(error)) {
        // A legacy server that exits on a request it does not know: started again, and not asked again.
        this.era?.assumeLegacy();
        return this.connectSession({ kind: 'legacy' });
      }
      // A kept-alive socket the server had closed (it restarted): nothing was processed, and a new socket may work.
      if (error instanceof Error && networkErrorCode(error) === 'UND_ERR_SOCKET') return this.connectSession(prior);
      throw error;
    });
    if (this.closed) {
      await closeSession(session);
      throw couldNotReach(this.config, 'the MCP pool closed meanwhile (the worker is shutting down)');
    }
    this.session = session;
    return session;
  }

  /**
   * True when the server closed the connection on the version probe and may be spoken to through `initialize`
   * instead: not when `protocolVersion` pins 2026-07-28, which such a server does not speak.
   */
  private mayFallBack(error: unknown): boolean {
    return closedDuringProbe(error) && this.config.protocolVersion === undefined;
  }

  private async connectSession(prior: PriorDiscovery | undefined): Promise<Session> {
    const session = this.createSession();
    this.connects += 1;
    this.connecting = session;
    try {
      await session.client.connect(session.transport, { timeout: this.settings.connectTimeoutMs, prior });
    } catch (error) {
      await closeSession(session);
      if (this.mayFallBack(error)) throw error;
      throw connectFailure(this.config, error, stderrHint(session));
    } finally {
      if (this.connecting === session) this.connecting = undefined;
    }
    this.era?.remember(session.client);
    // A 2025-11-25 session is used once its stream for the server's questions is open (./standalone-stream.ts).
    await session.standalone?.opened((problem) => this.log.warn(`MCP server "${this.config.name}" ${problem}`));
    return session;
  }

  private createSession(resume?: { sessionId: string }): Session {
    const { config, settings, log } = this;
    const client = new Client(settings.clientInfo, {
      capabilities: { elicitation: ELICITATION_CAPABILITY },
      // The server's `protocolVersion`, else the session over stdio and the probe over HTTP (./protocol-era.ts).
      versionNegotiation: resume ? { mode: 'legacy' } : versionNegotiationFor(config),
      // `notifications/tools/list_changed` of a 2025-11-25 session, or of the `subscriptions/listen` stream the SDK
      // opens to a 2026-07-28 server that offers it: the next use lists the tools again.
      listChanged: {
        tools: {
          autoRefresh: false,
          debounceMs: 0,
          onChanged: () => {
            session.tools = undefined;
            log.debug(`MCP server "${config.name}" changed its tool list.`);
          },
        },
      },
    });
    const standalone = config.transport === 'http' && !resume ? new StandaloneStream(config.url) : undefined;
    const transport =
      config.transport === 'stdio'
        ? new InPlaceStdioClientTransport({
            command: config.command,
            args: config.args,
            env: config.env,
            cwd: config.cwd,
            stderr: 'pipe',
          })
        : new StreamableHTTPClientTransport(new URL(config.url), {
            requestInit: { headers: config.headers },
            ...(resume && { sessionId: resume.sessionId }),
            ...(standalone && { fetch: standalone.observe(this.oauth?.observingFetch()) }),
            ...(this.oauth && { authProvider: this.oauth }),
          });
    const progress = new ProgressRoutes();
    // The SDK's `connect` keeps this handler and calls it first, with each message in the order it was read.
    transport.onmessage = (message) => {
      readMissingResultTypeAsComplete(message);
      // Only a 2026-07-28 server has the tasks extension's answers (./task-extension.ts).
      if (client.getProtocolEra() === 'modern') readTaskAnswer(message);
      progress.deliver(message);
    };
    const session: Session = {
      client,
      transport,
      closed: false,
      tools: undefined,
      stderrTail: [],
      calls: new Set(),
      progress,
      ...(standalone && { standalone }),
    };
    if (transport instanceof InPlaceStdioClientTransport) this.collectStderr(transport, session);
    client.onclose = () => {
      session.closed = true;
      if (this.session === session) {
        this.session = undefined;
        log.debug(`MCP server "${config.name}" disconnected; the next call reconnects.`);
      }
    };
    client.onerror = (error) => {
      if (!isOwnProgressTokenError(error)) log.debug(`MCP server "${config.name}": ${errorMessage(error)}`);
    };
    client.setRequestHandler('elicitation/create', (request, context) =>
      routeElicitation(session.calls, request.params, context.mcpReq.signal, (message) =>
        log.warn(`MCP server "${config.name}" ${message}`),
      ),
    );
    return session;
  }

  private collectStderr(transport: InPlaceStdioClientTransport, session: Session): void {
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const raw of lines) {
        // A server that prints its key must not put it in the worker's log either.
        const line = this.redactor.text(raw);
        session.stderrTail.push(line);
        if (session.stderrTail.length > STDERR_TAIL_LINES) session.stderrTail.shift();
        this.settings.onServerStderr(this.config.name, line);
      }
    });
  }
}

/** The last lines of a stdio server's stderr, to end an error message with ('' when it wrote none). */
export function stderrHint(session: Session): string {
  const tail = session.stderrTail.filter((line) => line.trim() !== '').slice(-5);
  return tail.length === 0 ? '' : `. Server stderr (last lines): ${tail.join(' | ')}`;
}

async function closeSession(session: Session): Promise<void> {
  session.closed = true;
  const transport = session.transport;
  if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
    // Ending the session frees it on the server; a server that is gone must not hold up the shutdown.
    await Promise.race([
      transport.terminateSession().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, 1000).unref()),
    ]);
  }
  await session.client.close().catch(() => undefined);
}
