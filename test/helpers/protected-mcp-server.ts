import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type AuthMetadataOptions,
  getOAuthProtectedResourceMetadataUrl,
  OAuthError,
  OAuthErrorCode,
  type OAuthMetadata,
  oauthMetadataResponse,
  type OAuthTokenVerifier,
  requireBearerAuth,
} from '@modelcontextprotocol/server';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { errorMessage } from '../../src/shared/errors.js';
import { MCP_SCOPES, startTestAuthorizationServer, type TestAuthorizationServer } from './oauth-server.js';

/**
 * Our test MCP server (src/testing/mcp-test-server.ts) as an OAuth-protected resource: behind the MCP SDK's own
 * `requireBearerAuth`, with its protected-resource metadata (RFC 9728) served by the SDK's `oauthMetadataResponse`,
 * accepting only JWTs that the test authorization server signed for this server's URL (RFC 8707 audience).
 */

export interface ProtectedMcp {
  mcp: RunningTestMcpServer;
  authorizationServer: TestAuthorizationServer;
  /** Every access token the MCP server accepted, in order: the values a test scans history and logs for. */
  acceptedTokens: string[];
  /** Requests answered 401 / 403 by the bearer check. */
  rejections: { unauthorized: number; insufficientScope: number };
  /** Scopes every request must carry from now on (step-up: raise them and the next request gets 403). */
  requireScopes(scopes: string[]): void;
  /** From now on, answer every POST that passed the bearer check with a 500 whose body quotes the token. */
  failEchoingToken(): void;
  /**
   * Move to a new authorization server: the resource metadata names it from now on, and only its tokens are accepted
   * (`authorizationServer` is the new one afterwards). Resolves with the old one.
   */
  moveToNewAuthorizationServer(): Promise<TestAuthorizationServer>;
  close(): Promise<void>;
}

export const MACHINE_CLIENT = { clientId: 'machine', clientSecret: 'machine-secret-0123456789abcdef' };

export interface ProtectedMcpOptions {
  accessTokenTtlSeconds?: number;
  /** Lifetime of the access tokens a refresh gives; default `accessTokenTtlSeconds`. */
  refreshedAccessTokenTtlSeconds?: number;
  machineClientSecret?: string;
  /** A client-credentials client that signs its assertions with the private key of this public JWK. */
  keyClient?: { clientId: string; publicKey: Record<string, unknown> };
  /** JSON-RPC methods answered without a token: a server that lets anyone open a session and challenges later. */
  openMethods?: string[];
  /** The authorization server the resource metadata names, if not the real one's issuer (a mismatch). */
  advertisedAuthorizationServer?: string;
  /** The authorization server's `invalid_client` answer quotes the client secret it was sent. Default false. */
  quoteRefusedSecret?: boolean;
}

export async function startProtectedMcp(options: ProtectedMcpOptions = {}): Promise<ProtectedMcp> {
  let guard: Middleware | undefined;
  const mcp = await startTestMcpServer({
    transport: 'http',
    port: 0,
    middleware: (request, response, next) => {
      if (guard === undefined) response.writeHead(503).end();
      else
        guard(request, response, next).catch((error: unknown) => {
          if (!response.headersSent) response.writeHead(500);
          response.end(errorMessage(error));
        });
    },
  });
  const startAuthorizationServer = () =>
    startTestAuthorizationServer({
      resource: mcp.url,
      machineClient: { ...MACHINE_CLIENT, clientSecret: options.machineClientSecret ?? MACHINE_CLIENT.clientSecret },
      accessTokenTtlSeconds: options.accessTokenTtlSeconds,
      ...(options.refreshedAccessTokenTtlSeconds !== undefined
        ? { refreshedAccessTokenTtlSeconds: options.refreshedAccessTokenTtlSeconds }
        : {}),
      keyClient: options.keyClient,
      quoteRefusedSecret: options.quoteRefusedSecret,
    });
  let authorizationServer: TestAuthorizationServer;
  try {
    authorizationServer = await startAuthorizationServer();
  } catch (error) {
    await mcp.close();
    throw error;
  }
  const retired: TestAuthorizationServer[] = [];
  const close = async () => {
    await mcp.close();
    await Promise.all([authorizationServer, ...retired].map((server) => server.close()));
  };
  try {
    let trusted = await trustOf(authorizationServer.issuer);
    const acceptedTokens: string[] = [];
    const rejections = { unauthorized: 0, insufficientScope: 0 };
    const verifier: OAuthTokenVerifier = {
      verifyAccessToken: async (token) => {
        let payload;
        try {
          const { issuer, jwks } = trusted;
          ({ payload } = await jwtVerify(token, jwks, { issuer, audience: mcp.url }));
        } catch (error) {
          throw new OAuthError(OAuthErrorCode.InvalidToken, `token rejected: ${errorMessage(error)}`);
        }
        return {
          token,
          clientId: String(payload.client_id),
          scopes: (typeof payload.scope === 'string' ? payload.scope : '').split(' ').filter((scope) => scope !== ''),
          expiresAt: payload.exp,
          resource: new URL(mcp.url),
        };
      },
    };
    const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(new URL(mcp.url));
    let requiredScopes = ['mcp:tools'];
    let echoToken = false;
    const metadataOf = (metadata: OAuthMetadata): AuthMetadataOptions => ({
      oauthMetadata:
        options.advertisedAuthorizationServer === undefined
          ? metadata
          : { ...metadata, issuer: options.advertisedAuthorizationServer },
      resourceServerUrl: new URL(mcp.url),
      scopesSupported: [...MCP_SCOPES],
    });
    let metadataOptions = metadataOf(trusted.metadata);
    const isOpen = async (request: IncomingMessage): Promise<boolean> => {
      const open = options.openMethods;
      if (open === undefined || request.method !== 'POST') return false;
      // Read the body to see its method, and leave it where the MCP endpoint's request adapter looks first.
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      Object.assign(request, { rawBody: body });
      const { method } = JSON.parse(body.toString('utf8')) as { method?: string };
      return method !== undefined && open.includes(method);
    };
    const app: Middleware = async (request, response, next) => {
      const webRequest = new Request(new URL(request.url ?? '/', mcp.url), {
        method: request.method,
        headers: headersOf(request),
      });
      const metadata = oauthMetadataResponse(webRequest, metadataOptions);
      if (metadata !== undefined) return send(metadata, response);
      if (!new URL(webRequest.url).pathname.startsWith('/mcp') || (await isOpen(request))) return next();
      const authorized = await requireBearerAuth({ verifier, requiredScopes, resourceMetadataUrl })(webRequest);
      if (authorized instanceof Response) {
        if (authorized.status === 401) rejections.unauthorized += 1;
        if (authorized.status === 403) rejections.insufficientScope += 1;
        return send(authorized, response);
      }
      const token = authorized.token;
      if (!acceptedTokens.includes(token)) acceptedTokens.push(token);
      if (echoToken && request.method === 'POST') {
        // A broken gateway that quotes the credential it was sent, not as a header: only its value can give it away.
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`upstream failed for credential ${token}`);
        return;
      }
      next();
    };
    guard = app;
    const running: ProtectedMcp = {
      mcp,
      authorizationServer,
      acceptedTokens,
      rejections,
      requireScopes: (scopes) => {
        requiredScopes = scopes;
      },
      failEchoingToken: () => {
        echoToken = true;
      },
      async moveToNewAuthorizationServer() {
        const old = authorizationServer;
        const next = await startAuthorizationServer();
        retired.push(old);
        authorizationServer = running.authorizationServer = next;
        trusted = await trustOf(next.issuer);
        metadataOptions = metadataOf(trusted.metadata);
        return old;
      },
      close,
    };
    return running;
  } catch (error) {
    await close();
    throw error;
  }
}

type Middleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => Promise<void>;

function headersOf(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    for (const each of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, each);
  }
  return headers;
}

async function send(answer: Response, response: ServerResponse): Promise<void> {
  response.writeHead(answer.status, Object.fromEntries(answer.headers));
  response.end(Buffer.from(await answer.arrayBuffer()));
}

/** What the resource trusts of an authorization server: its issuer, its metadata and its signing keys. */
async function trustOf(issuer: string) {
  const metadata = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as OAuthMetadata & {
    jwks_uri: string;
  };
  return { issuer, metadata, jwks: createRemoteJWKSet(new URL(metadata.jwks_uri)) };
}
