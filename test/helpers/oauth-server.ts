import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { errors, type ClientLike, type KoaContext } from 'oidc-provider';

/**
 * A real OAuth 2.1 authorization server for tests: oidc-provider, run in this process on a loopback port, with client
 * credentials, authorization code + PKCE, dynamic client registration, refresh tokens and resource indicators (RFC
 * 8707) turned on. Access tokens for the MCP resource are RS256 JWTs with the resource as audience, so the MCP
 * server verifies them against the provider's JWKS. The login and consent interaction approves at once as `user`:
 * whoever follows the authorization URL with a cookie-keeping HTTP client ends at the redirect URI with a code.
 */

/** Scopes the MCP resource server knows. */
export const MCP_SCOPES = ['mcp:tools', 'mcp:admin'] as const;

export interface TestAuthorizationServer {
  /** Issuer URL, e.g. `http://127.0.0.1:40000`. */
  issuer: string;
  /** Tokens issued so far by grant (`client_credentials`, `authorization_code`, `refresh_token`). */
  grants: Record<string, number>;
  /** Clients registered dynamically so far. */
  registrations: number;
  /** The metadata of each client registered dynamically, as the authorization server keeps it. */
  registeredClients: Array<Record<string, unknown>>;
  /** Stop answering (an outage), keeping every token and grant; `start` answers again on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export interface TestAuthorizationServerOptions {
  /** The MCP server's URL: the only resource indicator the server issues tokens for. */
  resource: string;
  /** Pre-registered confidential client for client credentials. */
  machineClient: { clientId: string; clientSecret: string };
  /** Pre-registered client for client credentials that authenticates with a JWT signed by this key (private_key_jwt). */
  keyClient?: { clientId: string; publicKey: Record<string, unknown> };
  /** Lifetime of access tokens in seconds. Default 300. */
  accessTokenTtlSeconds?: number;
  /** Lifetime of the access tokens a refresh gives, in seconds. Default `accessTokenTtlSeconds`. */
  refreshedAccessTokenTtlSeconds?: number;
  /**
   * A careless server: its `invalid_client` answer quotes the client secret it was sent (`client secret "…" is not
   * valid`), as some do. Default false (oidc-provider's own "client authentication failed").
   */
  quoteRefusedSecret?: boolean;
}

export async function startTestAuthorizationServer(
  options: TestAuthorizationServerOptions,
): Promise<TestAuthorizationServer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig', kid: 'test-key' };
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const ttl = options.accessTokenTtlSeconds ?? 300;
  // A refresh's access token may live longer than the first (`refreshedAccessTokenTtlSeconds`).
  const accessTokenTtl = (ctx: { oidc?: { params?: { grant_type?: unknown } } }) =>
    ctx.oidc?.params?.grant_type === 'refresh_token' ? (options.refreshedAccessTokenTtlSeconds ?? ttl) : ttl;
  const resourceServer = {
    scope: MCP_SCOPES.join(' '),
    audience: options.resource,
    accessTokenTTL: ttl,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'RS256' as const } },
  };
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    clients: [
      {
        client_id: options.machineClient.clientId,
        client_secret: options.machineClient.clientSecret,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: MCP_SCOPES.join(' '),
      },
      ...(options.keyClient === undefined
        ? []
        : [
            {
              client_id: options.keyClient.clientId,
              token_endpoint_auth_method: 'private_key_jwt',
              jwks: { keys: [options.keyClient.publicKey] },
              grant_types: ['client_credentials'],
              response_types: [],
              redirect_uris: [],
              scope: MCP_SCOPES.join(' '),
            },
          ]),
    ],
    scopes: ['openid', 'offline_access', ...MCP_SCOPES],
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf ?? options.resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx: { oidc?: { params?: { grant_type?: unknown } } }, indicator: string) => {
          if (indicator !== options.resource) throw new errors.InvalidTarget();
          return { ...resourceServer, accessTokenTTL: accessTokenTtl(ctx) };
        },
      },
    },
    // Public clients registered dynamically get refresh tokens without asking for offline_access.
    issueRefreshToken: (_ctx: unknown, client: ClientLike) => client.grantTypeAllowed('refresh_token'),
    ttl: { AccessToken: accessTokenTtl, ClientCredentials: ttl },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
  });
  if (options.quoteRefusedSecret === true) {
    provider.use(async (ctx, next) => {
      await next();
      const body = ctx.body as { error?: unknown } | undefined;
      if (body?.error !== 'invalid_client') return;
      ctx.body = { ...body, error_description: `client secret "${sentSecret(ctx)}" is not valid` };
    });
  }
  const server: TestAuthorizationServer = {
    issuer,
    grants: {},
    registrations: 0,
    registeredClients: [],
    stop: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
    start: () => new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve)),
    close: async () => {
      if (http.listening) await server.stop();
    },
  };
  provider.on('grant.success', (ctx: { oidc: { params?: { grant_type?: unknown } } }) => {
    const grant = String(ctx.oidc.params?.grant_type);
    server.grants[grant] = (server.grants[grant] ?? 0) + 1;
  });
  provider.on('registration_create.success', (_ctx: unknown, client: { metadata(): Record<string, unknown> }) => {
    server.registrations += 1;
    server.registeredClients.push(client.metadata());
  });
  const callback = provider.callback();
  http.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (request.url?.startsWith('/interaction/')) {
      approve(provider, request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
      return;
    }
    void callback(request, response);
  });
  return server;
}

/** The client secret a token request sent: in its body (client_secret_post) or as Basic (client_secret_basic). */
function sentSecret(ctx: KoaContext): string {
  const posted = ctx.oidc?.params?.client_secret;
  if (typeof posted === 'string') return posted;
  const basic = /^Basic\s+(\S+)/i.exec(ctx.get('authorization'))?.[1];
  if (basic === undefined) return '';
  const credentials = Buffer.from(basic, 'base64').toString('utf8');
  // RFC 6749 2.3.1: the id and the secret are form-encoded before they are joined.
  return decodeURIComponent(credentials.slice(credentials.indexOf(':') + 1).replace(/\+/g, ' '));
}

/** The interaction: log in as `user` and grant every scope and resource scope asked for. */
async function approve(provider: Provider, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(request, response);
  const { prompt, params } = details;
  if (prompt.name === 'login') {
    await provider.interactionFinished(request, response, { login: { accountId: 'user' } });
    return;
  }
  const grant =
    details.grantId === undefined
      ? new provider.Grant({ accountId: details.session!.accountId, clientId: String(params.client_id) })
      : (await provider.Grant.find(details.grantId))!;
  const missing = prompt.details as {
    missingOIDCScope?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(request, response, { consent: { grantId } }, { mergeWithLastSubmission: true });
}
