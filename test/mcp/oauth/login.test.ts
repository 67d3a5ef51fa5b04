import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseMcpConfig, type HttpServerConfig } from '../../../src/worker/mcp/config.js';
import { McpAuthorizationRequiredError } from '../../../src/worker/mcp/errors.js';
import { loginToMcpServer } from '../../../src/worker/mcp/oauth/login.js';
import {
  FileTokenStore,
  MemoryTokenStore,
  tokenStoreKey,
  type StoredAuthorization,
} from '../../../src/worker/mcp/oauth/token-store.js';
import { cliPath, killAll, runCli, spawnTracked } from '../../cli/helpers.js';
import { followAuthorization } from '../../helpers/authorize.js';
import { startProtectedMcp, type ProtectedMcp, type ProtectedMcpOptions } from '../../helpers/protected-mcp-server.js';
import { mcpTool, usePools, useTemporaryDirectories } from '../helpers.js';

/**
 * The authorization-code flow for a person (issue 19, item 3), against a real authorization server (oidc-provider)
 * and an MCP server that requires its tokens: `durable-agent mcp login` through the MCP SDK (discovery, dynamic
 * registration, PKCE, resource indicator), the token file, the worker using and refreshing the login, and the named
 * error of a worker that has none.
 */

const servers: ProtectedMcp[] = [];
const temporaryDirectory = useTemporaryDirectories();
const pool = usePools();

afterEach(killAll);
afterAll(async () => {
  await Promise.allSettled(servers.map((server) => server.close()));
});

async function protectedServer(options: ProtectedMcpOptions = {}): Promise<ProtectedMcp> {
  const server = await startProtectedMcp(options);
  servers.push(server);
  return server;
}

function personConfig(server: ProtectedMcp): HttpServerConfig {
  const config = parseMcpConfig(
    JSON.stringify({ mcpServers: { people: { url: server.mcp.url, oauth: { grant: 'authorization_code' } } } }),
    'mcp.json',
    {},
  );
  return config.servers[0] as HttpServerConfig;
}

/** Log in in this process, a fetch-driven "browser" following the URL the SDK built. */
async function logIn(config: HttpServerConfig, store: MemoryTokenStore | FileTokenStore): Promise<void> {
  let browser: Promise<unknown> | undefined;
  await loginToMcpServer(config, {
    store,
    onAuthorizationUrl: (url) => {
      browser = followAuthorization(url.href);
    },
  });
  await browser;
}

async function waitFor(output: () => string, pattern: RegExp): Promise<RegExpExecArray> {
  for (let tries = 0; tries < 300; tries += 1) {
    const match = pattern.exec(output());
    if (match !== null) return match;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Never printed ${pattern}:\n${output()}`);
}

describe('durable-agent mcp login', () => {
  it('authorizes with PKCE, a registered client and the resource indicator, and keeps the tokens in a 0600 file the worker uses', async () => {
    const server = await protectedServer();
    const directory = temporaryDirectory();
    const tokenDirectory = path.join(directory, 'tokens');
    const configFile = path.join(directory, 'mcp.json');
    writeFileSync(
      configFile,
      JSON.stringify({ mcpServers: { people: { url: server.mcp.url, oauth: { grant: 'authorization_code' } } } }),
    );
    const login = spawnTracked(
      process.execPath,
      [cliPath, 'mcp', 'login', 'people', '--mcp-config', configFile, '--no-browser'],
      { ...process.env, DURABLE_AGENT_TOKEN_DIR: tokenDirectory, CI: '1' },
    );
    const [printed] = await waitFor(login.output, /http:\/\/127\.0\.0\.1:\d+\/auth\?\S+/);
    const authorization = new URL(printed);
    expect(authorization.origin).toBe(server.authorizationServer.issuer);
    expect(authorization.searchParams.get('response_type')).toBe('code');
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(authorization.searchParams.get('resource')).toBe(server.mcp.url);
    expect(authorization.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(authorization.searchParams.get('scope')).toContain('mcp:tools');
    expect(server.authorizationServer.registrations).toBe(1); // no client configured: registered dynamically

    const landing = await followAuthorization(printed);
    expect(landing).toMatchObject({ status: 200, body: expect.stringContaining('Logged in') });
    expect(await login.exited).toBe(0);
    expect(login.output()).toMatch(/Logged in to MCP server "people" \(\d+ tools\)/);
    expect(server.authorizationServer.grants).toMatchObject({ authorization_code: 1 });

    // One file, readable by its user only, in a directory only its user can enter.
    const files = readdirSync(tokenDirectory);
    expect(files).toHaveLength(1);
    expect(statSync(tokenDirectory).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(tokenDirectory, files[0]!)).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(path.join(tokenDirectory, files[0]!), 'utf8')) as StoredAuthorization;
    const accessToken = stored.tokens!.access_token;
    expect(stored.tokens!.refresh_token).toEqual(expect.any(String));
    // The CLI printed no token.
    expect(login.output()).not.toContain(accessToken);
    expect(login.output()).not.toContain(stored.tokens!.refresh_token);

    // A worker's pool with that token directory uses the login.
    const mcp = pool([personConfig(server)], { tokenStore: new FileTokenStore(tokenDirectory) });
    const result = await mcp.callTool(mcpTool('people', 'echo'), { text: 'hello' });
    expect(result.content).toEqual([{ type: 'text', text: 'hello' }]);
    expect(server.acceptedTokens).toContain(accessToken);
  });

  it('is refreshed once when parallel calls find it expired (the authorization server rotates refresh tokens)', async () => {
    const ttlSeconds = 3;
    // The refreshed token lasts a minute: however slow the five calls, one refresh is all they need, and a second
    // would be a second use of the refresh token.
    const server = await protectedServer({ accessTokenTtlSeconds: ttlSeconds, refreshedAccessTokenTtlSeconds: 60 });
    const config = personConfig(server);
    const store = new MemoryTokenStore();
    await logIn(config, store);
    const mcp = pool([config], { tokenStore: store });
    await mcp.callTool(mcpTool('people', 'echo'), { text: 'first' });
    const refreshes = server.authorizationServer.grants.refresh_token ?? 0;
    await new Promise((resolve) => setTimeout(resolve, ttlSeconds * 1000 + 1100));

    // Each call meets a 401 and asks the SDK to authorize again; a second use of a rotated refresh token would make
    // the authorization server revoke the whole grant (reuse detection).
    const texts = ['a', 'b', 'c', 'd', 'e'];
    const results = await Promise.all(texts.map((text) => mcp.callTool(mcpTool('people', 'echo'), { text })));
    expect(results.map((result) => result.content)).toEqual(texts.map((text) => [{ type: 'text', text }]));
    expect(server.authorizationServer.grants.refresh_token).toBe(refreshes + 1);
    const stored = await store.load(tokenStoreKey({ name: 'people', url: server.mcp.url }));
    expect(stored?.tokens?.expires_in).toBeGreaterThan(ttlSeconds);
  });

  it('names what is wrong with the server it is asked to log in to (exit code 2)', async () => {
    const directory = temporaryDirectory();
    const configFile = path.join(directory, 'mcp.json');
    const machine = { grant: 'client_credentials', clientId: 'a', clientSecret: 'b' };
    writeFileSync(
      configFile,
      JSON.stringify({
        mcpServers: { crm: { url: 'http://127.0.0.1:9/mcp', oauth: machine }, files: { command: 'x' } },
      }),
    );
    const env = { ...process.env, DURABLE_AGENT_TOKEN_DIR: path.join(directory, 'tokens') };
    const unknown = await runCli(['mcp', 'login', 'nope', '--mcp-config', configFile], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`${configFile} has no server "nope" (servers: "crm", "files").`);
    const machineServer = await runCli(['mcp', 'login', 'crm', '--mcp-config', configFile], env);
    expect(machineServer.code).toBe(2);
    expect(machineServer.stderr).toMatch(
      /server "crm" has no "oauth": \{"grant": "authorization_code"\}.*client_credentials need no person/,
    );
    const noConfig = await runCli(['mcp', 'login', 'crm'], { ...env, DURABLE_AGENT_MCP_CONFIG: '' });
    expect(noConfig.code).toBe(2);
    expect(noConfig.stderr).toContain('No MCP config: pass --mcp-config FILE or set DURABLE_AGENT_MCP_CONFIG.');
  });

  it('is refreshed by the worker once its access token has expired', async () => {
    const ttlSeconds = 3;
    const server = await protectedServer({ accessTokenTtlSeconds: ttlSeconds });
    const config = personConfig(server);
    const store = new MemoryTokenStore();
    await logIn(config, store);
    const mcp = pool([config], { tokenStore: store });
    expect((await mcp.callTool(mcpTool('people', 'echo'), { text: 'first' })).content).toEqual([
      { type: 'text', text: 'first' },
    ]);
    const key = tokenStoreKey(config);
    const before = (await store.load(key))!.tokens!;
    // On a slow machine the first call may already have needed a refresh: count from here.
    const refreshes = server.authorizationServer.grants.refresh_token ?? 0;

    // Let the access token expire: the server answers 401, and the SDK refreshes with the stored refresh token.
    await new Promise((resolve) => setTimeout(resolve, ttlSeconds * 1000 + 1100));
    expect((await mcp.callTool(mcpTool('people', 'echo'), { text: 'second' })).content).toEqual([
      { type: 'text', text: 'second' },
    ]);
    expect(server.rejections.unauthorized).toBeGreaterThanOrEqual(1);
    expect(server.authorizationServer.grants).toMatchObject({ authorization_code: 1, refresh_token: refreshes + 1 });
    const after = (await store.load(key))!.tokens!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(server.acceptedTokens.slice(-2)).toEqual([before.access_token, after.access_token]);
    // The new token reached the pool's redactor the moment the provider held it.
    expect(mcp.secrets.text(`Bearer ${after.access_token}`)).toBe('Bearer [oauth access token of MCP server people]');
  });
});

describe('a worker whose authorization server is down', () => {
  it('fails a call after expiry as retryable, keeps the login, and refreshes once the server is back', async () => {
    const ttlSeconds = 3;
    const server = await protectedServer({ accessTokenTtlSeconds: ttlSeconds });
    const config = personConfig(server);
    const store = new MemoryTokenStore();
    await logIn(config, store);
    const mcp = pool([config], { tokenStore: store });
    await mcp.callTool(mcpTool('people', 'echo'), { text: 'before' });
    const refreshes = server.authorizationServer.grants.refresh_token ?? 0;
    await server.authorizationServer.stop();
    await new Promise((resolve) => setTimeout(resolve, ttlSeconds * 1000 + 1100));

    const call = mcp.callTool(mcpTool('people', 'echo'), { text: 'while down' });
    await expect(call).rejects.toThrow(/could not refresh its OAuth login .*the next attempt tries again/);
    await expect(call).rejects.toMatchObject({ retryable: true, requestSent: false });
    await expect(call).rejects.not.toBeInstanceOf(McpAuthorizationRequiredError);

    await server.authorizationServer.start();
    expect((await mcp.callTool(mcpTool('people', 'echo'), { text: 'after' })).content).toEqual([
      { type: 'text', text: 'after' },
    ]);
    expect(server.authorizationServer.grants.refresh_token).toBe(refreshes + 1);
  });
});

describe('a worker without a login', () => {
  it('leaves the server out with McpAuthorizationRequiredError, which tells the operator to log in, without calling it', async () => {
    const server = await protectedServer();
    const store = new FileTokenStore(path.join(temporaryDirectory(), 'tokens'));
    const mcp = pool([personConfig(server)], { tokenStore: store, outageBackoffMs: 0 });

    const listing = await mcp.listTools();
    expect(listing.tools).toEqual([]);
    expect(listing.unavailable).toEqual([
      {
        server: 'people',
        reason: expect.stringMatching(
          /MCP server "people" needs a person to authorize it: no login is stored in the token directory .*Run `durable-agent mcp login people`/,
        ),
      },
    ]);
    const call = mcp.callTool(mcpTool('people', 'echo'), { text: 'hello' });
    await expect(call).rejects.toBeInstanceOf(McpAuthorizationRequiredError);
    await expect(call).rejects.toMatchObject({ retryable: false, requestSent: false });
    expect(server.mcp.counters.sessions).toBe(0);
    expect(server.rejections.unauthorized).toBe(0);

    // Once a person has logged in, the running pool uses the login at its next try: no restart needed.
    await logIn(personConfig(server), store);
    const after = await mcp.listTools();
    expect(after.unavailable).toEqual([]);
    expect(after.tools.map((tool) => tool.name)).toContain('people__echo');
  });

  it('gets the same error when its stored login can no longer be refreshed', async () => {
    const ttlSeconds = 1;
    const server = await protectedServer({ accessTokenTtlSeconds: ttlSeconds });
    const config = personConfig(server);
    const store = new MemoryTokenStore();
    await logIn(config, store);
    // The refresh token is revoked (here: replaced by one the authorization server never issued).
    const key = tokenStoreKey(config);
    const stored = (await store.load(key))!;
    await store.save(key, { ...stored, tokens: { ...stored.tokens!, refresh_token: 'revoked-refresh-token' } });
    await new Promise((resolve) => setTimeout(resolve, ttlSeconds * 1000 + 1100));

    const mcp = pool([config], { tokenStore: store });
    const call = mcp.callTool(mcpTool('people', 'echo'), { text: 'hello' });
    await expect(call).rejects.toBeInstanceOf(McpAuthorizationRequiredError);
    await expect(call).rejects.toThrow(
      /the stored login has expired and could not be refreshed.*durable-agent mcp login people/,
    );
    expect(server.mcp.counters.calls.echo).toBeUndefined();
  });
});
