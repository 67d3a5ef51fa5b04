import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { refuse, ServeErrorType } from './http-errors.js';
import { isPublicRead, UNCHECKED_HOST_PATHS } from './routes.js';

/**
 * What keeps a web page from using `durable-agent serve` through a person's browser (docs/streaming.md, "Threat
 * model"): a Host allowlist against DNS rebinding, JSON-only bodies (a form or a `text/plain` fetch needs no CORS
 * preflight: this is what stops the cross-site POST), an Origin check, CORS for configured origins only, and a body
 * size limit. One middleware per rule, applied to every route.
 */

/** Host names a loopback server answers to when no others are configured. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '::1'] as const;
/** The body size limit when none is configured: a message of 100,000 characters fits in any encoding. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export interface BrowserSafetyOptions {
  /**
   * Host names (without port) the server answers to besides the loopback names ({@link LOOPBACK_HOSTS}, always
   * allowed: a page cannot make a browser send them to another server); `*` for any. Default none.
   */
  allowedHosts?: readonly string[];
  /**
   * Origins of other sites allowed to call the server from a browser (CORS, and the Origin check of writes), such as
   * `https://app.example.com`; `*` for any (only with authentication). Default none: same origin only.
   */
  allowedOrigins?: readonly string[];
  /** Largest request body accepted, in bytes; default 1 MiB. */
  maxBodyBytes?: number;
}

/** The middlewares, in the order they apply. */
export function browserSafety(options: BrowserSafetyOptions): MiddlewareHandler[] {
  const origins = options.allowedOrigins ?? [];
  return [
    referrerPolicy,
    hostAllowlist([...LOOPBACK_HOSTS, ...(options.allowedHosts ?? [])]),
    ...(origins.length > 0 ? [cors({ origin: origins.includes('*') ? '*' : [...origins], maxAge: 600 })] : []),
    jsonBodiesOnly(),
    originCheck(origins),
    bodyLimit({
      maxSize: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      onError: (c) =>
        refuse(
          c,
          413,
          ServeErrorType.BodyTooLarge,
          `The body is larger than ${options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES} bytes, this server's limit.`,
        ),
    }),
  ];
}

/**
 * `Referrer-Policy: no-referrer` on every answer (unless a route set its own): a page of this server that links
 * elsewhere does not hand its URL, which may carry a token, to the other site.
 */
const referrerPolicy: MiddlewareHandler = async (c, next) => {
  await next();
  if (!c.res.headers.has('referrer-policy')) c.res.headers.set('Referrer-Policy', 'no-referrer');
};

/** `localhost:8787` → `localhost`, `[::1]:8787` and `::1` → `::1`; lower case, without a trailing dot. */
export function hostName(host: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  const bareIpv6 = (host.match(/:/g) ?? []).length > 1;
  const name = bracketed ? bracketed[1]! : bareIpv6 ? host : host.replace(/:\d+$/, '');
  return name.toLowerCase().replace(/\.$/, '');
}

function hostAllowlist(allowed: readonly string[]): MiddlewareHandler {
  const names = new Set(allowed.map(hostName));
  const any = names.has('*');
  return async (c, next) => {
    if (any || UNCHECKED_HOST_PATHS.has(c.req.path)) return next();
    const host = c.req.header('host') ?? '';
    if (names.has(hostName(host))) return next();
    return refuse(
      c,
      421,
      ServeErrorType.HostNotAllowed,
      `This server does not answer to Host ${JSON.stringify(host)} (it answers to ${[...names].join(', ')}). ` +
        'A foreign Host is how a web page reaches a local server by DNS rebinding. If this is your server’s name, ' +
        'add it with --allowed-host or DURABLE_AGENT_SERVE_ALLOWED_HOSTS.',
    );
  };
}

/**
 * A browser names the page's origin on every cross-origin request and on same-origin writes. Refuse any request whose
 * Origin is neither this server (same host) nor configured; requests without Origin (curl, servers) pass.
 */
function originCheck(allowed: readonly string[]): MiddlewareHandler {
  const any = allowed.includes('*');
  return async (c, next) => {
    const origin = c.req.header('origin');
    if (origin === undefined || any || allowed.includes(origin) || isPublicRead(c.req.method, c.req.path)) {
      return next();
    }
    if (sameHost(origin, c.req.header('host'))) return next();
    return refuse(
      c,
      403,
      ServeErrorType.OriginNotAllowed,
      `Requests from a page on ${origin} are not allowed. Serve the page from this server, or add its origin with ` +
        '--allowed-origin or DURABLE_AGENT_SERVE_ALLOWED_ORIGINS.',
    );
  };
}

function sameHost(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host.toLowerCase() === host.toLowerCase();
  } catch {
    return false; // `null` (a sandboxed frame, a file) or garbage
  }
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Only `application/json` bodies: what a page can send without a CORS preflight is refused before any handler. */
function jsonBodiesOnly(): MiddlewareHandler {
  return async (c, next) => {
    const type = c.req.header('content-type');
    const needsJson = BODY_METHODS.has(c.req.method) || (type !== undefined && c.req.method !== 'GET');
    if (!needsJson || (type !== undefined && /^application\/json\s*(;|$)/i.test(type))) return next();
    return refuse(
      c,
      415,
      ServeErrorType.UnsupportedMediaType,
      `Bodies must be JSON sent with Content-Type: application/json (got ${type === undefined ? 'none' : JSON.stringify(type)}).`,
    );
  };
}
