import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';

export type ProgressUpdate = { progress: number; total?: number; message?: string };

const TOKEN_PREFIX = 'durable-agent-progress-';

/**
 * Progress notifications delivered in the order the server sent them, none lost to the response that follows.
 *
 * The SDK dispatches a notification a microtask after reading it, but settles a response at once and forgets the
 * request's progress handler with it: when the last notifications and the response arrive in one read (a busy client,
 * a tool that reports and returns at once), those notifications find no handler and are dropped. So a call's progress
 * gets a token of ours instead of the SDK's (its request id), and the transport's first handler, which sees every
 * message in order before the SDK does, hands each notification to its call.
 */
export class ProgressRoutes {
  readonly #routes = new Map<string, (update: ProgressUpdate) => void>();

  /** A token for one call's `_meta.progressToken`; `close` it when the call has settled. */
  open(onProgress: (update: ProgressUpdate) => void): { token: string; close(): void } {
    const token = `${TOKEN_PREFIX}${randomUUID()}`;
    this.#routes.set(token, onProgress);
    return { token, close: () => this.#routes.delete(token) };
  }

  /** Called with every message the transport reads, before the SDK sees it. */
  deliver(message: JSONRPCMessage): void {
    if (!('method' in message) || message.method !== 'notifications/progress' || 'id' in message) return;
    const { progressToken, progress, total, message: text } = (message.params ?? {}) as Record<string, unknown>;
    const route = typeof progressToken === 'string' ? this.#routes.get(progressToken) : undefined;
    if (route === undefined || typeof progress !== 'number') return;
    route({
      progress,
      ...(typeof total === 'number' && { total }),
      ...(typeof text === 'string' && { message: text }),
    });
  }
}

/** The SDK reports a notification for a token it did not hand out; for ours that is expected, not worth a log line. */
export function isOwnProgressTokenError(error: Error): boolean {
  return (
    error.message.startsWith('Received a progress notification for an unknown token') &&
    error.message.includes(TOKEN_PREFIX)
  );
}
