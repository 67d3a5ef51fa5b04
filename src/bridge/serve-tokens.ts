import { errors, jwtVerify, SignJWT } from 'jose';
import { DurableAgentError } from '../shared/errors.js';
import { ExitCode } from '../shared/exit-codes.js';
import { tenantProblem, TENANT_SHAPE } from '../shared/tenants.js';

/**
 * Signed tokens for `durable-agent serve` (docs/streaming.md, "Tokens"): a product's backend, which knows its users,
 * mints a short-lived token that opens some conversations, read-only or read+write, and hands it to the browser. The
 * server checks it with the same secret. HS256 JWTs, signed and verified by `jose`.
 */

/** The secret must have at least this many bytes (HS256's key size; `openssl rand -base64 32` gives 44). */
export const MIN_SERVE_SECRET_BYTES = 32;
/** Lifetime of a token when `ttl` is not given. */
export const DEFAULT_SERVE_TOKEN_TTL = '1h';
/** The longest `ttl` accepted: tokens are meant to be short-lived, and re-minted by the backend. */
export const MAX_SERVE_TOKEN_TTL_SECONDS = 24 * 3600;

const ISSUER = 'durable-agent';
const AUDIENCE = 'durable-agent serve';

export type ServeTokenScope = 'read' | 'read+write';

export interface ServeTokenOptions {
  /** The secret `durable-agent serve` holds (`DURABLE_AGENT_SERVE_SECRET`), at least 32 bytes. */
  secret: string | Uint8Array;
  /** The conversation ids the token opens; at least one. */
  conversations: readonly string[];
  /** Also allow writes (sending messages, deciding approvals); default false: read only. */
  write?: boolean;
  /** Lifetime: seconds, or `30s`, `15m`, `1h`, `1d`; default `1h`, at most 24 h. */
  ttl?: number | string;
  /** Who the token is for (the JWT `sub`), for the product's own records; optional. */
  subject?: string;
  /**
   * The tenant the token acts for (docs/tenants.md): it opens only that tenant's conversations, and a conversation it
   * creates belongs to that tenant. Default none: the conversations' tenants are not checked.
   */
  tenant?: string;
}

/** What a valid token allows. */
export interface ServeGrant {
  conversations: string[];
  write: boolean;
  expiresAt: Date;
  subject?: string;
  /** The tenant the token acts for; absent on a token without one. */
  tenant?: string;
}

/**
 * A mistake in the configuration of `serve` or of a token (a short secret, a bad ttl, an unprotected public bind):
 * nothing was started or signed. The CLI exits with the usage code.
 */
export class ServeConfigError extends DurableAgentError {
  readonly exitCode = ExitCode.Usage;
}

/** A presented token that is not valid: `expired`, or `invalid` (bad signature, malformed, wrong claims). */
export class ServeTokenInvalidError extends DurableAgentError {
  constructor(
    readonly reason: 'expired' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

/** The secret as key bytes; refuses one shorter than {@link MIN_SERVE_SECRET_BYTES}. */
export function serveSecretKey(secret: string | Uint8Array, name = 'the serve secret'): Uint8Array {
  const key = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
  if (key.length < MIN_SERVE_SECRET_BYTES) {
    throw new ServeConfigError(
      `${name} has ${key.length} bytes; it needs at least ${MIN_SERVE_SECRET_BYTES} ` +
        '(generate one with `openssl rand -base64 32`).',
    );
  }
  return key;
}

/** Mint a token for `durable-agent serve` scoped to `conversations`, read-only unless `write`. */
export async function createServeToken(options: ServeTokenOptions): Promise<string> {
  const key = serveSecretKey(options.secret);
  const conversations = [...options.conversations];
  if (conversations.length === 0 || conversations.some((id) => typeof id !== 'string' || id === '')) {
    throw new ServeConfigError('A serve token needs at least one conversation id, none of them empty.');
  }
  if (options.tenant !== undefined) {
    const problem = tenantProblem(options.tenant);
    if (problem !== undefined) {
      throw new ServeConfigError(
        `The token's tenant ${JSON.stringify(options.tenant)} is not valid (${problem}); expected ${TENANT_SHAPE}.`,
      );
    }
  }
  const seconds = ttlSeconds(options.ttl ?? DEFAULT_SERVE_TOKEN_TTL);
  const scope: ServeTokenScope = options.write === true ? 'read+write' : 'read';
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ conversations, scope, ...(options.tenant === undefined ? {} : { tenant: options.tenant }) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + seconds);
  if (options.subject !== undefined) jwt.setSubject(options.subject);
  return await jwt.sign(key);
}

/** Check a token's signature, expiry and claims; what it allows, or a {@link ServeTokenInvalidError}. */
export async function verifyServeToken(token: string, key: Uint8Array): Promise<ServeGrant> {
  let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
  try {
    ({ payload } = await jwtVerify(token, key, { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE }));
  } catch (error) {
    if (error instanceof errors.JWTExpired) {
      throw new ServeTokenInvalidError('expired', 'The token has expired: ask the application for a new one.');
    }
    throw new ServeTokenInvalidError(
      'invalid',
      'The token is not valid here (malformed, or not signed by this server).',
    );
  }
  const { conversations, scope, exp, sub, tenant } = payload;
  const valid =
    (tenant === undefined || typeof tenant === 'string') &&
    Array.isArray(conversations) &&
    conversations.every((id) => typeof id === 'string') &&
    (scope === 'read' || scope === 'read+write') &&
    typeof exp === 'number';
  if (!valid) throw new ServeTokenInvalidError('invalid', 'The token lacks its conversations, scope or expiry.');
  return {
    conversations,
    write: scope === 'read+write',
    expiresAt: new Date(exp * 1000),
    ...(sub !== undefined ? { subject: sub } : {}),
    ...(typeof tenant === 'string' ? { tenant } : {}),
  };
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `3600`, `'3600'`, `'90s'`, `'15m'`, `'1h'`, `'1d'` → seconds, within (0, 24 h]. */
export function ttlSeconds(ttl: number | string): number {
  const match = typeof ttl === 'number' ? null : /^(\d+)\s*([smhd]?)$/.exec(ttl.trim());
  const seconds = typeof ttl === 'number' ? ttl : match ? Number(match[1]) * UNIT_SECONDS[match[2] || 's']! : NaN;
  if (!Number.isInteger(seconds) || seconds <= 0 || seconds > MAX_SERVE_TOKEN_TTL_SECONDS) {
    throw new ServeConfigError(
      `Invalid token ttl ${JSON.stringify(ttl)}: expected a duration such as 90s, 15m, 1h (at most 24h) or whole seconds.`,
    );
  }
  return seconds;
}
