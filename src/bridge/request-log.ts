import type { MiddlewareHandler } from 'hono';

/** Where `serve` writes its request log: one line per request. */
export type RequestLogger = (line: string) => void;

/**
 * One line per request: time, method, path, status, duration (to the response's headers: a stream's line comes when
 * it opens). The path only, never the query (it may hold `access_token`) nor any header.
 */
export function requestLog(log: RequestLogger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const path = new URL(c.req.url).pathname;
      const ms = Math.round(performance.now() - started);
      log(`${new Date().toISOString()} ${c.req.method} ${path} ${c.res.status} ${ms}ms`);
    }
  };
}
