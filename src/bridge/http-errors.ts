import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/**
 * The `type` of every refusal `durable-agent serve` answers with (`{ error: { type, message } }`), besides the client's
 * own named errors (MessageRejectedError, ConversationNotFoundError, ConversationEndedError).
 */
export const ServeErrorType = {
  /** 400: the body is not the JSON the route expects. */
  InvalidBody: 'InvalidBody',
  /** 401: no token where one is needed. */
  MissingToken: 'MissingToken',
  /** 401: a token that is not the operator token and not a signed token of this server. */
  InvalidToken: 'InvalidToken',
  /** 401: a signed token past its expiry. */
  TokenExpired: 'TokenExpired',
  /** 403: a valid token that does not open this conversation, or this route. */
  OutsideTokenScope: 'OutsideTokenScope',
  /** 403: a token for one tenant on a conversation of another (or of none; docs/tenants.md). */
  OtherTenant: 'OtherTenant',
  /** 403: a read-only token on a write. */
  ReadOnlyToken: 'ReadOnlyToken',
  /** 403: a browser request from an origin that is not this server's nor a configured one. */
  OriginNotAllowed: 'OriginNotAllowed',
  /** 421: a Host header this server does not answer to (DNS rebinding). */
  HostNotAllowed: 'HostNotAllowed',
  /** 413: a body larger than the limit. */
  BodyTooLarge: 'BodyTooLarge',
  /** 415: a body that is not `application/json`. */
  UnsupportedMediaType: 'UnsupportedMediaType',
  /** 503 from /readyz: Temporal cannot be reached. */
  TemporalUnreachable: 'TemporalUnreachable',
  /** 500: anything unexpected. */
  InternalError: 'InternalError',
} as const;

export type ServeErrorTypeName = (typeof ServeErrorType)[keyof typeof ServeErrorType];

export function problem(type: string, message: string) {
  return { error: { type, message } };
}

/** Answer with a JSON refusal. */
export function refuse(
  c: Context,
  status: ContentfulStatusCode,
  type: ServeErrorTypeName,
  message: string,
  headers?: Record<string, string>,
): Response {
  return c.json(problem(type, message), status, headers);
}

/**
 * A failure the route expects, named in `statuses` by its class name (the client's named errors), as a JSON refusal
 * with that status and the error's message; anything else is rethrown (a 500).
 */
export function clientRefusal(c: Context, error: unknown, statuses: Record<string, ContentfulStatusCode>): Response {
  const name = error instanceof Error ? error.name : 'Error';
  const status = statuses[name];
  if (status === undefined) throw error;
  return c.json(problem(name, (error as Error).message), status);
}
