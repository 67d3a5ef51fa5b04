import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { DurableAgentError, errorMessage } from '../../../shared/errors.js';
import type { HttpServerConfig, McpConfig } from '../config.js';
import { McpConfigError } from '../config.js';
import { redactorFor } from '../redaction.js';
import { VERSION_NEGOTIATION } from '../protocol-era.js';
import { McpOAuthProvider } from './provider.js';
import type { McpTokenStore } from './token-store.js';

/**
 * `durable-agent mcp login SERVER`: the authorization-code flow for a person, run by the MCP SDK. The SDK discovers
 * the authorization server from the MCP server's 401 challenge and resource metadata, registers a client if none is
 * configured, and builds the authorization URL with PKCE and the resource indicator; we print that URL, receive the
 * redirect on a loopback port, and hand the code back to the SDK, which exchanges it and stores the tokens through
 * the provider in the worker's token store.
 */

/** The login did not complete: the person refused, the state did not match, or nobody came back in time. */
export class McpLoginError extends DurableAgentError {}

export interface LoginOptions {
  store: McpTokenStore;
  /** Receives the authorization URL, to print (and perhaps open in a browser). */
  onAuthorizationUrl: (url: URL) => void;
  /** How long to wait for the browser to come back. Default 5 minutes. */
  timeoutMs?: number;
  clientInfo?: { name: string; version: string };
}

export interface LoginResult {
  /** How many tools the server offers with the new login (it was checked by listing them). */
  tools: number;
}

/** The HTTP server `name` of `config`, which must use the authorization-code grant. */
export function loginTarget(config: McpConfig, name: string): HttpServerConfig & { oauth: { grant: string } } {
  const server = config.servers.find((candidate) => candidate.name === name);
  const where = config.file ?? 'the MCP config';
  if (server === undefined) {
    const names = config.servers.map((candidate) => `"${candidate.name}"`).join(', ') || 'none';
    throw new McpConfigError(`${where} has no server "${name}" (servers: ${names}).`);
  }
  if (server.transport !== 'http' || server.oauth?.grant !== 'authorization_code') {
    throw new McpConfigError(
      `${where}: server "${name}" has no "oauth": {"grant": "authorization_code"}, so there is nothing to log in to` +
        (server.transport === 'http' && server.oauth !== undefined ? ' (its client_credentials need no person).' : '.'),
    );
  }
  return server as HttpServerConfig & { oauth: { grant: string } };
}

export async function loginToMcpServer(server: HttpServerConfig, options: LoginOptions): Promise<LoginResult> {
  const oauth = server.oauth;
  if (oauth === undefined) throw new McpConfigError(`Server "${server.name}" has no "oauth" configuration.`);
  const state = randomUUID();
  const callback = await listenForRedirect(oauth.redirectPort, state, options.timeoutMs ?? 5 * 60_000);
  const redactor = redactorFor(server);
  try {
    const redact = (value: string, label: string) => void redactor.add(value, label);
    const provider = new McpOAuthProvider(
      { name: server.name, url: server.url, oauth },
      options.store,
      { kind: 'login', redirectUrl: callback.redirectUrl, state, onAuthorizationUrl: options.onAuthorizationUrl },
      redact,
    );
    await provider.beginLogin(callback.redirectUrl);
    const transport = newTransport(server, provider);
    const started = await connect(server, transport, options);
    if (started === 'connected') throw new McpLoginError(`MCP server "${server.name}" asked for no authorization.`);
    await transport.finishAuth(await callback.parameters);
    // Check the login the way the worker will use it: from the store, in a new session.
    const check = new McpOAuthProvider({ name: server.name, url: server.url, oauth }, options.store, undefined, redact);
    const client = new Client(options.clientInfo ?? { name: 'durable-agent', version: '0' }, {
      versionNegotiation: VERSION_NEGOTIATION,
    });
    await client.connect(newTransport(server, check));
    try {
      return { tools: (await client.listTools()).tools.length };
    } finally {
      await client.close();
    }
  } catch (error) {
    throw redactor.error(error);
  } finally {
    await callback.close();
  }
}

function newTransport(server: HttpServerConfig, provider: McpOAuthProvider): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: server.headers },
    authProvider: provider,
    fetch: provider.observingFetch(),
  });
}

/**
 * Open a session and list the tools: the server's 401 starts the SDK's authorization, which ends in
 * `UnauthorizedError` ("redirect"). Servers may answer `initialize` (or `server/discover`) to anyone and challenge
 * only the requests that follow, so a session alone proves nothing.
 */
async function connect(
  server: HttpServerConfig,
  transport: StreamableHTTPClientTransport,
  options: LoginOptions,
): Promise<'connected' | 'redirected'> {
  const client = new Client(options.clientInfo ?? { name: 'durable-agent', version: '0' }, {
    versionNegotiation: VERSION_NEGOTIATION,
  });
  try {
    await client.connect(transport);
    await client.listTools();
    await client.close();
    return 'connected';
  } catch (error) {
    if (error instanceof UnauthorizedError) return 'redirected';
    throw new McpLoginError(`Could not start the login to MCP server "${server.name}": ${errorMessage(error)}`, {
      cause: error,
    });
  }
}

interface RedirectListener {
  redirectUrl: string;
  /**
   * The redirect's parameters once the browser comes back with a code (rejects on an error, a bad state or timeout):
   * the SDK reads the code and checks `iss` against the authorization server (RFC 9207) before it redeems the code.
   */
  parameters: Promise<URLSearchParams>;
  close(): Promise<void>;
}

/** A loopback HTTP server on `port` (0: any free one) that waits for one redirect to `/callback`. */
async function listenForRedirect(port: number, state: string, timeoutMs: number): Promise<RedirectListener> {
  let settle!: { resolve: (parameters: URLSearchParams) => void; reject: (error: Error) => void };
  const parameters = new Promise<URLSearchParams>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const http: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    const outcome = readRedirect(url.searchParams, state);
    response.writeHead(outcome.code === undefined ? 400 : 200, { 'content-type': 'text/plain; charset=utf-8' });
    response.end(
      outcome.code === undefined
        ? `Login failed: ${outcome.problem}\n`
        : 'Logged in. You can close this window and return to the terminal.\n',
    );
    if (outcome.code === undefined) settle.reject(new McpLoginError(outcome.problem));
    else settle.resolve(url.searchParams);
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', (error) =>
      reject(new McpLoginError(`Cannot listen for the login's redirect on 127.0.0.1:${port}: ${errorMessage(error)}`)),
    );
    http.listen(port, '127.0.0.1', resolve);
  });
  const timer = setTimeout(
    () => settle.reject(new McpLoginError(`Nobody completed the login within ${Math.round(timeoutMs / 1000)} s.`)),
    timeoutMs,
  );
  parameters.catch(() => undefined);
  return {
    redirectUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}/callback`,
    parameters,
    close: async () => {
      clearTimeout(timer);
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function readRedirect(
  params: URLSearchParams,
  state: string,
): { code: string } | { code?: undefined; problem: string } {
  const error = params.get('error');
  if (error !== null) {
    const description = params.get('error_description');
    return { problem: `the authorization server answered ${error}${description === null ? '' : ` (${description})`}` };
  }
  if (params.get('state') !== state)
    return { problem: 'the state does not match this login (a stale or forged redirect)' };
  const code = params.get('code');
  return code === null || code === '' ? { problem: 'the redirect carries no authorization code' } : { code };
}
