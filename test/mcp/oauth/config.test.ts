import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { McpConfigError, parseMcpConfig, type HttpServerConfig } from '../../../src/worker/mcp/config.js';
import { redactorFor } from '../../../src/worker/mcp/redaction.js';
import { McpPool } from '../../../src/worker/mcp/pool.js';
import { McpOAuthProvider } from '../../../src/worker/mcp/oauth/provider.js';
import {
  defaultTokenDirectory,
  FileTokenStore,
  MemoryTokenStore,
  McpTokenStoreError,
  tokenStoreKey,
} from '../../../src/worker/mcp/oauth/token-store.js';

/** The `oauth` key of the MCP config, the token file, and the redaction of live tokens (issue 19, item 3). */

const FILE = '/etc/durable-agent/mcp.json';
const URL = 'https://crm.example.com/mcp';
const directories: string[] = [];
afterAll(() => directories.forEach((directory) => rmSync(directory, { recursive: true, force: true })));

function parse(oauth: unknown, env: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  const config = parseMcpConfig(JSON.stringify({ mcpServers: { crm: { url: URL, oauth, ...extra } } }), FILE, env);
  return config.servers[0] as HttpServerConfig;
}

function parseError(oauth: unknown, extra: Record<string, unknown> = {}): string {
  try {
    parse(oauth, {}, extra);
  } catch (error) {
    expect(error).toBeInstanceOf(McpConfigError);
    return (error as Error).message;
  }
  throw new Error('expected an McpConfigError');
}

describe('the oauth config', () => {
  test('reads both grants, expanding ${VAR} in the client secret and remembering it for redaction', () => {
    const server = parse(
      { grant: 'client_credentials', clientId: 'agent', clientSecret: '${CRM_SECRET}', scopes: ['crm:read'] },
      { CRM_SECRET: 'the-client-secret' },
    );
    expect(server.oauth).toEqual({
      grant: 'client_credentials',
      clientId: 'agent',
      clientSecret: 'the-client-secret',
      scopes: ['crm:read'],
      redirectPort: 0,
    });
    expect(server.variables).toEqual({ CRM_SECRET: 'the-client-secret' });
    expect(redactorFor(server).text('secret the-client-secret')).toBe('secret ${CRM_SECRET}');
    expect(parse({ grant: 'authorization_code', redirectPort: 8765 }).oauth).toEqual({
      grant: 'authorization_code',
      clientId: undefined,
      clientSecret: undefined,
      scopes: undefined,
      redirectPort: 8765,
    });
  });

  test.each([
    [
      { grant: 'password' },
      /key "oauth.grant": expected "client_credentials" .*, "authorization_code" .* or "enterprise_managed" .*got string "password"/,
    ],
    [{}, /key "oauth.grant": expected "client_credentials"/],
    [
      { grant: 'client_credentials', clientId: 'agent' },
      /key "oauth": the client_credentials grant needs a pre-registered client: set "clientId" and either "clientSecret" .* or "privateKey"\/"privateKeyFile"/,
    ],
    [
      { grant: 'authorization_code', clientSecret: 'x' },
      /key "oauth.clientSecret": a client secret needs its "clientId"/,
    ],
    [{ grant: 'authorization_code', scopes: 'a b' }, /key "oauth.scopes": expected a non-empty array of scope names/],
    [
      { grant: 'authorization_code', scopes: ['a b'] },
      /key "oauth.scopes": expected a non-empty array of scope names \(no spaces\)/,
    ],
    [
      { grant: 'authorization_code', redirectPort: 70000 },
      /key "oauth.redirectPort": expected a port number from 0 to 65535/,
    ],
    [
      { grant: 'client_credentials', clientId: 'a', clientSecret: 'b', redirectPort: 1 },
      /key "oauth.redirectPort": only the authorization_code grant has a redirect/,
    ],
    [
      { grant: 'authorization_code', issuer: 'x' },
      /key "oauth.issuer": unknown key; expected one of "grant", "clientId"/,
    ],
    ['yes', /key "oauth": expected an object/],
  ])('rejects %j with a message that names the file, the server and the key', (oauth, message) => {
    const text = parseError(oauth);
    expect(text).toContain(`${FILE}: server "crm"`);
    expect(text).toMatch(message);
  });

  test('refuses a static Authorization header next to oauth, and oauth on a stdio server', () => {
    expect(parseError({ grant: 'authorization_code' }, { headers: { authorization: 'Bearer x' } })).toMatch(
      /key "headers.Authorization": conflicts with "oauth"/,
    );
    expect(() =>
      parseMcpConfig(
        JSON.stringify({ mcpServers: { local: { command: 'x', oauth: { grant: 'authorization_code' } } } }),
        FILE,
        {},
      ),
    ).toThrow(/server "local" key "oauth": unknown key \("url"\/"headers" belong to HTTP servers/);
  });

  test('a missing ${VAR} in the client secret is named', () => {
    expect(() => parse({ grant: 'client_credentials', clientId: 'a', clientSecret: '${NOPE}' })).toThrow(
      /key "oauth.clientSecret": environment variable NOPE is not set/,
    );
  });
});

describe('the token store', () => {
  test('defaults to DURABLE_AGENT_TOKEN_DIR, else the user config directory', () => {
    const tokens = path.join(tmpdir(), 'tokens');
    expect(defaultTokenDirectory({ DURABLE_AGENT_TOKEN_DIR: tokens })).toBe(path.resolve(tokens));
    // A relative directory is resolved against the working directory.
    expect(defaultTokenDirectory({ DURABLE_AGENT_TOKEN_DIR: 'tokens' })).toBe(path.resolve('tokens'));
    const configHome = path.join(tmpdir(), 'config-home');
    expect(defaultTokenDirectory({ XDG_CONFIG_HOME: configHome })).toBe(
      path.join(configHome, 'durable-agent', 'mcp-tokens'),
    );
  });

  test('writes a 0600 file per server and says which file is broken without quoting it', async () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'durable-agent-tokens-'));
    directories.push(directory);
    const store = new FileTokenStore(path.join(directory, 'tokens'));
    const key = tokenStoreKey({ name: 'crm', url: URL });
    await store.save(key, { tokens: { access_token: 'abc', token_type: 'Bearer' } });
    expect(statSync(store.fileOf(key)).mode & 0o777).toBe(0o600);
    expect(await store.load(key)).toEqual({ tokens: { access_token: 'abc', token_type: 'Bearer' } });
    expect(tokenStoreKey({ name: 'crm', url: 'https://elsewhere.example.com/mcp' })).not.toBe(key);

    writeFileSync(store.fileOf(key), '{"tokens": {"access_token": "half-a-secret');
    const error = await store.load(key).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpTokenStoreError);
    expect((error as Error).message).toMatch(
      /tokens\/crm-[0-9a-f]{16}\.json is not valid JSON: delete it and log in again/,
    );
    expect((error as Error).message).not.toContain('half-a-secret');
    expect(readFileSync(store.fileOf(key), 'utf8')).toContain('half-a-secret'); // nothing lost
  });
});

describe('live OAuth tokens', () => {
  test('are registered with the pool for redaction as soon as the provider holds them', async () => {
    const server = parse({ grant: 'client_credentials', clientId: 'agent', clientSecret: 'literal-client-secret' });
    const registered: Array<[string, string]> = [];
    const provider = new McpOAuthProvider(
      { name: 'crm', url: URL, oauth: server.oauth! },
      new FileTokenStore('/x'),
      { kind: 'worker' },
      (value, label) => registered.push([value, label]),
    );
    expect(registered).toEqual([['literal-client-secret', '[oauth client secret of MCP server crm]']]);
    const token = 'eyJhbGciOiJSUzI1NiJ9.live-access-token';
    await provider.saveTokens({ access_token: token, refresh_token: 'live-refresh-token', token_type: 'Bearer' });
    await provider.saveTokens({ access_token: token, refresh_token: 'live-refresh-token', token_type: 'Bearer' });
    expect(registered).toEqual([
      ['literal-client-secret', '[oauth client secret of MCP server crm]'],
      [token, '[oauth access token of MCP server crm]'],
      ['live-refresh-token', '[oauth refresh token of MCP server crm]'],
    ]);
  });

  test('reach the pool redactor of the worker and of the server', () => {
    const pool = new McpPool([parse({ grant: 'authorization_code' })], { tokenStore: new MemoryTokenStore() });
    pool.addSecret('crm', 'eyJhbGciOiJSUzI1NiJ9.registered-token', '[oauth access token of MCP server crm]');
    expect(pool.secrets.text('Bearer eyJhbGciOiJSUzI1NiJ9.registered-token')).toBe(
      'Bearer [oauth access token of MCP server crm]',
    );
    void pool.close();
  });
  test('private_key_jwt and client metadata documents: a wrong or missing value names its key', () => {
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'pem', type: 'pkcs8' });
    const keyed = parse({ grant: 'client_credentials', clientId: 'agent', privateKey: '${KEY}' }, { KEY: String(pem) });
    expect(keyed.oauth?.privateKey).toEqual({ pem: String(pem), algorithm: 'ES384' });
    const withKey = (extra: Record<string, unknown>) => ({ grant: 'client_credentials', clientId: 'agent', ...extra });
    expect(parseError(withKey({ privateKey: 'not a key' }))).toMatch(/"oauth\.privateKey".*not a PEM private key/);
    expect(parseError(withKey({ privateKeyFile: '/nonexistent/key.pem' }))).toMatch(
      /"oauth\.privateKeyFile".*cannot read \/nonexistent\/key\.pem/,
    );
    expect(parseError(withKey({ privateKey: 'x', clientSecret: 'y' }))).toMatch(/"oauth\.privateKey".*not both/);
    expect(parseError(withKey({ privateKey: 'x', privateKeyFile: 'y' }))).toMatch(/"oauth\.privateKeyFile"/);
    expect(parseError(withKey({ signingAlgorithm: 'ES256' }))).toMatch(/"oauth\.signingAlgorithm"/);
    expect(parseError({ grant: 'authorization_code', privateKey: 'x' })).toMatch(
      /"oauth\.privateKey".*client_credentials/,
    );

    const cimd = { grant: 'authorization_code', clientMetadataUrl: 'https://agent.example.com/oauth/client.json' };
    expect(parse(cimd).oauth?.clientMetadataUrl).toBe('https://agent.example.com/oauth/client.json');
    expect(parseError({ ...cimd, clientMetadataUrl: 'http://agent.example.com/client.json' })).toMatch(
      /"oauth\.clientMetadataUrl".*https URL with a path/,
    );
    expect(parseError({ ...cimd, clientMetadataUrl: 'https://agent.example.com/' })).toMatch(
      /oauth\.clientMetadataUrl/,
    );
    expect(parseError({ ...cimd, clientId: 'agent' })).toMatch(/"oauth\.clientMetadataUrl".*remove "clientId"/);
  });

  test('enterprise_managed: reads the identity provider, and a wrong or missing value names its key', () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'durable-agent-id-token-'));
    directories.push(directory);
    writeFileSync(path.join(directory, 'id-token'), 'eyJ.id-token.sig\n');
    const identityProvider = { issuer: 'https://idp.example.com', clientId: 'agent-at-idp', idToken: '${ID_TOKEN}' };
    const enterprise = { grant: 'enterprise_managed', clientId: 'agent', clientSecret: 's', identityProvider };
    const server = parse(enterprise, { ID_TOKEN: 'eyJ.the-id-token.sig' });
    expect(server.oauth?.identityProvider).toEqual({
      token: { issuer: 'https://idp.example.com' },
      clientId: 'agent-at-idp',
      clientSecret: undefined,
      idToken: { value: 'eyJ.the-id-token.sig' },
    });
    const fromFile = { tokenEndpoint: 'http://127.0.0.1:9/token', clientId: 'c', idTokenFile: 'id-token' };
    const configFile = path.join(directory, 'mcp.json');
    const read = parseMcpConfig(
      JSON.stringify({ mcpServers: { crm: { url: URL, oauth: { ...enterprise, identityProvider: fromFile } } } }),
      configFile,
      {},
    ).servers[0] as HttpServerConfig;
    expect(read.oauth?.identityProvider?.idToken).toEqual({ file: path.join(directory, 'id-token') });
    expect(read.oauth?.identityProvider?.token).toEqual({ endpoint: 'http://127.0.0.1:9/token' });

    const withProvider = (provider: Record<string, unknown>) => ({ ...enterprise, identityProvider: provider });
    expect(parseError({ grant: 'enterprise_managed', identityProvider })).toMatch(
      /key "oauth": .*"clientId" and "clientSecret"/,
    );
    expect(parseError({ ...enterprise, identityProvider: undefined })).toMatch(
      /key "oauth.identityProvider": expected an object/,
    );
    expect(parseError({ grant: 'authorization_code', identityProvider })).toMatch(
      /"oauth.identityProvider".*enterprise_managed/,
    );
    expect(parseError(withProvider({ ...identityProvider, tokenEndpoint: 'https://idp.example.com/t' }))).toMatch(
      /"oauth.identityProvider".*"issuer" .* or "tokenEndpoint"/,
    );
    expect(parseError(withProvider({ ...identityProvider, issuer: 'http://idp.example.com' }))).toMatch(
      /"oauth.identityProvider.issuer".*https URL/,
    );
    expect(parseError(withProvider({ ...identityProvider, clientId: undefined }))).toMatch(
      /"oauth.identityProvider.clientId"/,
    );
    expect(parseError(withProvider({ ...identityProvider, idToken: undefined }))).toMatch(
      /"oauth.identityProvider.idToken".*"idTokenFile"/,
    );
    expect(
      parseError(withProvider({ ...identityProvider, idToken: undefined, idTokenFile: '/nonexistent/t' })),
    ).toMatch(/"oauth.identityProvider.idTokenFile".*cannot read \/nonexistent\/t/);
    expect(parseError(withProvider({ ...identityProvider, audience: 'x' }))).toMatch(
      /"oauth.identityProvider.audience": unknown key/,
    );
  });
});
