import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMcpConfig, type HttpServerConfig } from '../../../src/worker/mcp/config.js';
import { McpAuthorizationRequiredError } from '../../../src/worker/mcp/errors.js';
import { loginToMcpServer } from '../../../src/worker/mcp/oauth/login.js';
import { MemoryTokenStore, tokenStoreKey } from '../../../src/worker/mcp/oauth/token-store.js';
import { followAuthorization } from '../../helpers/authorize.js';
import { startProtectedMcp, type ProtectedMcp, type ProtectedMcpOptions } from '../../helpers/protected-mcp-server.js';
import { mcpTool, usePools, useTemporaryDirectories } from '../helpers.js';

/**
 * What the authorization server and the MCP server may ask of a login beyond the first challenge, against a real
 * authorization server (oidc-provider): a challenge that comes only after `initialize`, a step-up on 403
 * `insufficient_scope` that the next `durable-agent mcp login` must ask for, the client's registration, the issuer of
 * the authorization server's metadata, a server that moves to another authorization server, and client credentials
 * signed with a private key (private_key_jwt).
 */

const servers: ProtectedMcp[] = [];
const pool = usePools();
const temporaryDirectory = useTemporaryDirectories();
afterAll(async () => {
  await Promise.allSettled(servers.map((server) => server.close()));
});

async function protectedServer(options: ProtectedMcpOptions = {}): Promise<ProtectedMcp> {
  const server = await startProtectedMcp(options);
  servers.push(server);
  return server;
}

function configOf(server: ProtectedMcp, oauth: Record<string, unknown>, directory = '/etc/durable-agent') {
  const text = JSON.stringify({ mcpServers: { people: { url: server.mcp.url, oauth } } });
  return parseMcpConfig(text, path.join(directory, 'mcp.json'), {}).servers[0] as HttpServerConfig;
}

/** A login in this process; resolves with the authorization URL the person was sent to. */
async function logIn(config: HttpServerConfig, store: MemoryTokenStore): Promise<URL> {
  let browser: Promise<unknown> | undefined;
  let sentTo: URL | undefined;
  await loginToMcpServer(config, {
    store,
    onAuthorizationUrl: (url) => {
      sentTo = url;
      browser = followAuthorization(url.href);
    },
  });
  await browser;
  return sentTo!;
}

describe('an OAuth login', () => {
  it('is started by a server that answers initialize to anyone and challenges only the requests after it', async () => {
    const server = await protectedServer({
      openMethods: ['initialize', 'notifications/initialized', 'server/discover'],
    });
    const config = configOf(server, { grant: 'authorization_code' });
    const store = new MemoryTokenStore();

    await logIn(config, store);

    expect(server.authorizationServer.grants).toMatchObject({ authorization_code: 1 });
    const result = await pool([config], { tokenStore: store }).callTool(mcpTool('people', 'echo'), { text: 'hi' });
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
    // The client registered as what it is: a native application with a loopback redirect (RFC 8252).
    expect(server.authorizationServer.registeredClients).toEqual([
      expect.objectContaining({ application_type: 'native' }),
    ]);
  });

  it('that a server steps up (403 insufficient_scope) names the scope, keeps it, and the next login asks for it', async () => {
    const server = await protectedServer();
    const config = configOf(server, { grant: 'authorization_code' });
    const store = new MemoryTokenStore();
    const first = await logIn(config, store);
    expect(first.searchParams.get('scope')?.split(' ')).not.toContain('mcp:admin');
    const worker = pool([config], { tokenStore: store });
    await worker.callTool(mcpTool('people', 'echo'), { text: 'before' });

    server.requireScopes(['mcp:tools', 'mcp:admin']);
    const refused = await worker
      .callTool(mcpTool('people', 'echo'), { text: 'after' })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpAuthorizationRequiredError);
    expect((refused as Error).message).toMatch(/asks for the scope "[^"]*mcp:admin[^"]*", which the stored login/);
    expect((refused as Error).message).toContain('durable-agent mcp login people');
    const stored = await store.load(tokenStoreKey(config));
    expect(stored?.scope?.split(' ')).toContain('mcp:admin');

    const second = await logIn(config, store);
    expect(second.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['mcp:tools', 'mcp:admin']));
    const result = await worker.callTool(mcpTool('people', 'echo'), { text: 'after' });
    expect(result.content).toEqual([{ type: 'text', text: 'after' }]);
  });

  it('after the server moved to another authorization server registers with that one, and never shows it the old client', async () => {
    const server = await protectedServer();
    const config = configOf(server, { grant: 'authorization_code' });
    const store = new MemoryTokenStore();
    await logIn(config, store);
    const worker = pool([config], { tokenStore: store });
    await worker.callTool(mcpTool('people', 'echo'), { text: 'before' });
    const oldClient = (await store.load(tokenStoreKey(config)))?.client?.client_id;

    const old = await server.moveToNewAuthorizationServer();
    const refused = await worker
      .callTool(mcpTool('people', 'echo'), { text: 'after' })
      .catch((error: unknown) => error);
    expect(String(refused)).toMatch(
      /now names the authorization server [^ ]+, not [^ ]+ that its stored login is from/,
    );
    expect(refused).toBeInstanceOf(McpAuthorizationRequiredError);
    const second = await logIn(config, store);

    expect(second.origin).toBe(new URL(server.authorizationServer.issuer).origin);
    expect(second.searchParams.get('client_id')).not.toBe(oldClient);
    expect(server.authorizationServer.registrations).toBe(1);
    expect(server.authorizationServer.grants).toMatchObject({ authorization_code: 1 });
    expect(old.registrations).toBe(1);
    const result = await worker.callTool(mcpTool('people', 'echo'), { text: 'after' });
    expect(result.content).toEqual([{ type: 'text', text: 'after' }]);
  });

  it('refuses authorization-server metadata whose issuer is not the server it was fetched from (RFC 8414)', async () => {
    const server = await protectedServer();
    // The same authorization server reached by another name: its metadata names 127.0.0.1, not localhost.
    const advertised = server.authorizationServer.issuer.replace('127.0.0.1', 'localhost');
    const impostor = await protectedServer({ advertisedAuthorizationServer: advertised });
    const config = configOf(impostor, { grant: 'authorization_code' });

    const failure = await logIn(config, new MemoryTokenStore()).catch((error: unknown) => error);

    expect(String(failure)).toMatch(/Issuer mismatch/i);
    expect(impostor.authorizationServer.grants).toEqual({});
    expect(impostor.authorizationServer.registrations).toBe(0);
  });
});

describe('client credentials signed with a private key (private_key_jwt)', () => {
  it('authorize the worker with a key read from a file next to the config', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'agent-key', alg: 'ES256', use: 'sig' };
    const server = await protectedServer({ keyClient: { clientId: 'keyed-agent', publicKey: jwk } });
    const directory = temporaryDirectory();
    writeFileSync(path.join(directory, 'agent-key.pem'), privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const config = configOf(
      server,
      { grant: 'client_credentials', clientId: 'keyed-agent', privateKeyFile: 'agent-key.pem' },
      directory,
    );

    const result = await pool([config]).callTool(mcpTool('people', 'echo'), { text: 'signed' });

    expect(result.content).toEqual([{ type: 'text', text: 'signed' }]);
    expect(server.authorizationServer.grants).toMatchObject({ client_credentials: 1 });
  });
});
