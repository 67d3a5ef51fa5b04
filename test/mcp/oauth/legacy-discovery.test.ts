import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { auth, IssuerMismatchError } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { parseMcpConfig, type HttpServerConfig } from '../../../src/worker/mcp/config.js';
import { McpOAuthProvider } from '../../../src/worker/mcp/oauth/provider.js';
import { MemoryTokenStore, tokenStoreKey } from '../../../src/worker/mcp/oauth/token-store.js';

/**
 * The one exception to the RFC 8414 §3.3 issuer check (src/worker/mcp/oauth/legacy-discovery.ts): a server of the 2025-03-26
 * revision, which publishes no protected-resource metadata and is its own authorization server, may name an issuer on
 * its own origin under another path. The first leg of a login, run by the SDK's `auth()` with our provider, against a
 * small HTTP server that answers the discovery requests the way such servers do.
 */

interface DiscoveryServer {
  url: string;
  origin: string;
  /** Client registrations received. */
  registrations: number;
}

let http: Server | undefined;
afterEach(async () => {
  http?.closeAllConnections();
  await new Promise<void>((resolve) => (http === undefined ? resolve() : http.close(() => resolve())));
  http = undefined;
});

/**
 * An MCP server's origin that answers discovery: authorization-server metadata at its root naming `issuerOf(origin)`,
 * protected-resource metadata naming its root as the authorization server only if `withResourceMetadata`, and dynamic
 * client registration.
 */
async function discoveryServer(
  issuerOf: (origin: string) => string,
  withResourceMetadata = false,
): Promise<DiscoveryServer> {
  const server: DiscoveryServer = { url: '', origin: '', registrations: 0 };
  http = createServer((request, response) => {
    const path = new URL(request.url ?? '/', server.origin).pathname;
    const json = (body: unknown, status = 200) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path.startsWith('/.well-known/oauth-protected-resource') && withResourceMetadata) {
      json({ resource: server.url, authorization_servers: [`${server.origin}/`] });
    } else if (path === '/.well-known/oauth-authorization-server') {
      json({
        issuer: issuerOf(server.origin),
        authorization_endpoint: `${server.origin}/oauth/authorize`,
        token_endpoint: `${server.origin}/oauth/token`,
        registration_endpoint: `${server.origin}/oauth/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
      });
    } else if (path === '/oauth/register' && request.method === 'POST') {
      server.registrations += 1;
      json({ client_id: 'registered-client', redirect_uris: ['http://127.0.0.1:1/callback'] }, 201);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => http!.listen(0, '127.0.0.1', resolve));
  server.origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  server.url = `${server.origin}/mcp`;
  return server;
}

/** The first leg of `durable-agent mcp login`: resolves with the URL the person would be sent to. */
async function startLogin(server: DiscoveryServer, store = new MemoryTokenStore()): Promise<URL | undefined> {
  let sentTo: URL | undefined;
  const text = JSON.stringify({ mcpServers: { legacy: { url: server.url, oauth: { grant: 'authorization_code' } } } });
  const target = parseMcpConfig(text, '/etc/durable-agent/mcp.json', {}).servers[0] as HttpServerConfig;
  const provider = new McpOAuthProvider({ ...target, oauth: target.oauth! }, store, {
    kind: 'login',
    redirectUrl: 'http://127.0.0.1:1/callback',
    state: 'state',
    onAuthorizationUrl: (url) => (sentTo = url),
  });
  await provider.beginLogin('http://127.0.0.1:1/callback');
  expect(await auth(provider, { serverUrl: server.url, fetchFn: provider.observingFetch() })).toBe('REDIRECT');
  return sentTo;
}

describe('authorization-server metadata of a server without protected-resource metadata (2025-03-26)', () => {
  it('is used when its issuer is on the origin it was fetched from, and kept for the second leg', async () => {
    const server = await discoveryServer((origin) => `${origin}/oauth`);
    const store = new MemoryTokenStore();
    const sentTo = await startLogin(server, store);
    expect(sentTo?.href.startsWith(`${server.origin}/oauth/authorize?`)).toBe(true);
    expect(server.registrations).toBe(1);
    const stored = await store.load(tokenStoreKey({ name: 'legacy', url: server.url }));
    expect(stored?.discovery?.authorizationServerMetadata?.issuer).toBe(`${server.origin}/oauth`);
  });

  it('is refused when its issuer is on another origin (a mix-up), before any client is registered', async () => {
    const server = await discoveryServer(() => 'https://attacker.example.com');
    const failure = await startLogin(server).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(IssuerMismatchError);
    expect(String(failure)).toContain('https://attacker.example.com');
    expect(server.registrations).toBe(0);
  });
});

describe('authorization-server metadata found through protected-resource metadata', () => {
  it('is refused when its issuer differs from the server named, even on the same origin', async () => {
    const server = await discoveryServer((origin) => `${origin}/oauth`, true);
    const failure = await startLogin(server).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(IssuerMismatchError);
    expect(server.registrations).toBe(0);
  });
});
