import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { refuse, ServeErrorType } from './http-errors.js';
import { routeTarget, type RouteTarget } from './routes.js';
import { checkTokenLength } from '../shared/tokens.js';
import { serveSecretKey, ServeConfigError, ServeTokenInvalidError, verifyServeToken } from './serve-tokens.js';

/** The query parameter and the cookie that carry a token for the event stream, where browsers cannot set headers. */
export const ACCESS_TOKEN_PARAMETER = 'access_token';
export const ACCESS_TOKEN_COOKIE = 'durable_agent_token';

export interface AuthenticationOptions {
  /** The operator token (`DURABLE_AGENT_SERVE_TOKEN`): every route, every conversation, in the Authorization header. */
  token?: string;
  /** The secret that signs scoped tokens (`DURABLE_AGENT_SERVE_SECRET`), at least 32 bytes. */
  secret?: string;
}

/**
 * A conversation's tenant, for the tokens that act for one: the tenant, `undefined` for a conversation without one, or
 * `null` when the conversation does not exist (yet).
 */
export type TenantLookup = (conversationId: string) => Promise<string | undefined | null>;

declare module 'hono' {
  interface ContextVariableMap {
    /** The tenant of the signed token that let the request in: a conversation it creates belongs to it. */
    durableAgentTenant: string | undefined;
  }
}

/** Whether requests need a token: when either an operator token or a secret is configured. */
export function authenticationEnabled(options: AuthenticationOptions): boolean {
  return options.token !== undefined || options.secret !== undefined;
}

/** Refuses a configuration that would weaken the tokens (a short operator token, a short secret). */
export function checkAuthenticationOptions(options: AuthenticationOptions): void {
  if (options.token !== undefined) {
    checkTokenLength(options.token, 'DURABLE_AGENT_SERVE_TOKEN', (message) => new ServeConfigError(message));
  }
  if (options.secret !== undefined) serveSecretKey(options.secret, 'DURABLE_AGENT_SERVE_SECRET');
}

interface Presented {
  token: string;
  /** Where it came from: only the header may carry the operator token. */
  from: 'header' | 'query' | 'cookie';
}

/**
 * Authentication and scopes, by rule (src/bridge/routes.ts): none when neither a token nor a secret is configured;
 * otherwise every request but public reads needs the operator token or a signed token whose scope covers the
 * conversation (and writes, for a write).
 */
export function authentication(options: AuthenticationOptions, tenantOf?: TenantLookup): MiddlewareHandler {
  checkAuthenticationOptions(options);
  if (!authenticationEnabled(options)) return async (_c, next) => next();
  const operator = options.token === undefined ? undefined : digest(options.token);
  const key = options.secret === undefined ? undefined : serveSecretKey(options.secret);
  return async (c, next) => {
    const target = routeTarget(c.req.method, new URL(c.req.url).pathname);
    // CORS preflights are answered before this (hono/cors), for the configured origins only.
    if (target.kind === 'public') return next();
    const presented = presentedToken(c, target);
    if (presented === undefined) return missing(c, target);
    if (operator !== undefined && timingSafeEqual(digest(presented.token), operator)) {
      if (presented.from === 'header') return next();
      return unauthorized(
        c,
        ServeErrorType.InvalidToken,
        'The operator token is accepted only in the Authorization header, never in a URL or a cookie. Give browsers ' +
          'a short-lived signed token (createServeToken, or `durable-agent token`).',
      );
    }
    if (key === undefined) {
      return unauthorized(
        c,
        ServeErrorType.InvalidToken,
        'The token is not this server’s operator token, and this server verifies no signed tokens ' +
          '(DURABLE_AGENT_SERVE_SECRET is not set).',
      );
    }
    let grant;
    try {
      grant = await verifyServeToken(presented.token, key);
    } catch (error) {
      if (!(error instanceof ServeTokenInvalidError)) throw error;
      const type = error.reason === 'expired' ? ServeErrorType.TokenExpired : ServeErrorType.InvalidToken;
      return unauthorized(c, type, error.message);
    }
    if (target.kind === 'server') {
      return refuse(c, 403, ServeErrorType.OutsideTokenScope, 'This route needs the operator token.');
    }
    if (!grant.conversations.includes(target.conversationId)) {
      return refuse(
        c,
        403,
        ServeErrorType.OutsideTokenScope,
        `The token does not open conversation ${JSON.stringify(target.conversationId)}.`,
      );
    }
    if (target.write && !grant.write) {
      return refuse(
        c,
        403,
        ServeErrorType.ReadOnlyToken,
        'The token is read-only; this request needs a read+write token.',
      );
    }
    if (grant.tenant !== undefined && tenantOf !== undefined) {
      const tenant = await tenantOf(target.conversationId);
      if (tenant !== null && tenant !== grant.tenant) {
        const owner = tenant === undefined ? 'no tenant' : 'another tenant';
        return refuse(
          c,
          403,
          ServeErrorType.OtherTenant,
          `The token acts for tenant ${JSON.stringify(grant.tenant)}; conversation ` +
            `${JSON.stringify(target.conversationId)} belongs to ${owner}.`,
        );
      }
      c.set('durableAgentTenant', grant.tenant);
    }
    return next();
  };
}

/** `Authorization: Bearer …`; for the stream only, also `?access_token=` or the `durable_agent_token` cookie. */
function presentedToken(c: Context, target: RouteTarget): Presented | undefined {
  const header = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (header) return { token: header[1]!, from: 'header' };
  if (target.kind !== 'conversation' || !target.stream) return undefined;
  const query = c.req.query(ACCESS_TOKEN_PARAMETER);
  if (query) return { token: query, from: 'query' };
  const cookie = getCookie(c, ACCESS_TOKEN_COOKIE);
  return cookie ? { token: cookie, from: 'cookie' } : undefined;
}

function missing(c: Context, target: RouteTarget): Response {
  const where =
    target.kind === 'conversation' && target.stream
      ? 'Send it as `Authorization: Bearer <token>`, or (browsers’ EventSource) as ?access_token= or the ' +
        'durable_agent_token cookie.'
      : 'Send it as `Authorization: Bearer <token>` (a token in the query or a cookie is accepted only for the event ' +
        'stream).';
  return unauthorized(c, ServeErrorType.MissingToken, `This server needs a token. ${where}`);
}

function unauthorized(
  c: Context,
  type: typeof ServeErrorType.MissingToken | 'InvalidToken' | 'TokenExpired',
  message: string,
) {
  return refuse(c, 401, type, message, { 'WWW-Authenticate': 'Bearer realm="durable-agent"' });
}

/** Compared as digests, so the comparison takes the same time whatever the lengths. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
