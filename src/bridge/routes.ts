/**
 * The rules by which the access checks classify a request, without knowing the routes one by one: so a route added to
 * the bridge is covered the day it is added.
 *
 * - Under `/conversations/<id>/…`: the conversation `<id>`; a read (GET, HEAD) or a write (any other method).
 * - `GET /conversations/<id>/events` is the stream: the only route that takes a token from the query or a cookie.
 * - Any other GET or HEAD (the page, its files, `/healthz`, `/readyz`) is public; any other write needs the operator
 *   token.
 */

/** Probes: answered whatever the Host (a load balancer's health check names the address, not the site). */
export const UNCHECKED_HOST_PATHS = new Set(['/healthz', '/readyz']);

export type RouteTarget =
  | { kind: 'public' }
  | { kind: 'conversation'; conversationId: string; write: boolean; stream: boolean }
  /** A write outside conversations, or a conversation path of an unexpected shape: the operator token only. */
  | { kind: 'server'; write: boolean };

const READ_METHODS = new Set(['GET', 'HEAD']);

/** A path segment naming conversations, in any case or encoding: never public. */
const CONVERSATIONS_SEGMENT = /(^|\/)conversations(\/|$)/i;

export function isPublicRead(method: string, path: string): boolean {
  return READ_METHODS.has(method) && !CONVERSATIONS_SEGMENT.test(decodeSafely(path));
}

/** Classify a request by method and raw (still percent-encoded) path. */
export function routeTarget(method: string, rawPath: string): RouteTarget {
  const write = !READ_METHODS.has(method);
  if (isPublicRead(method, rawPath)) return { kind: 'public' };
  const match = /^\/conversations\/([^/]+)(\/.*)?$/.exec(rawPath);
  const conversationId = match ? decodeSafely(match[1]!) : undefined;
  if (conversationId === undefined || conversationId === '') return { kind: 'server', write };
  return { kind: 'conversation', conversationId, write, stream: !write && match![2] === '/events' };
}

function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
