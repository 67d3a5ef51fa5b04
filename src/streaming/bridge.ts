import type { Client } from '@temporalio/client';
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { streamSSE } from 'hono/streaming';
import { subscribe } from '../client/stream.js';
import type { StreamEvent } from '../workflows/stream-events.js';
import { SubscriptionHub, type SubscriptionHubOptions } from './hub.js';
import { errorMessage } from '../shared/errors.js';
import { mountChatPage } from './chat-page.js';

/** What the bridge needs of `DurableAgentClient`: its Temporal client, and `send`. */
export interface BridgeAgentClient {
  readonly client: Client;
  send(
    conversationId: string,
    content: string,
    options?: { messageId?: string },
  ): Promise<{ conversationId: string; messageId: string; runId: string; created: boolean; reopened: boolean }>;
}

export interface StreamingBridgeOptions extends SubscriptionHubOptions {
  agent: BridgeAgentClient;
  /** Interval of the SSE keep-alive comment, so proxies do not close an idle stream. Default 15 s. */
  keepAliveMs?: number;
  /** Allowed origin(s) for browsers on another origin (CORS); default none (same origin only). */
  corsOrigin?: string | string[];
  /** How long one upstream poll may wait in the workflow; default 30 s. */
  pollWaitMs?: number;
}

export interface StreamingBridge {
  readonly app: Hono;
  readonly hub: SubscriptionHub;
  /**
   * End the open event streams and stop the upstream subscriptions; resolves once they have stopped (the HTTP server
   * is closed by whoever started it).
   */
  close(): Promise<void>;
}

/** Named errors the bridge answers with, as `{ error: { type, message } }`. */
const errorStatus: Record<string, 400 | 404 | 409> = {
  MessageRejectedError: 400,
  ConversationNotFoundError: 404,
  ConversationEndedError: 409,
};

/**
 * The HTTP bridge for web front ends (`durable-agent serve`, docs/streaming.md):
 *
 * - `GET /conversations/:id/events`: server-sent events, one per stream event (`id:` its offset, `event:` its type,
 *   `data:` its JSON). Reconnecting with `Last-Event-ID` (browsers do it by themselves) or `?from=OFFSET` resumes;
 *   without either the stream starts at the latest turn's start. All viewers of a conversation share one upstream
 *   subscription.
 * - `POST /conversations/:id/messages` with `{"content": "...", "id": "optional message id"}`: queue a message
 *   (creates or reopens the conversation); answers 202 with the message id.
 * - `GET /`: the chat page (src/streaming/page/), which uses the two routes above.
 */
export function createStreamingBridge(options: StreamingBridgeOptions): StreamingBridge {
  const { agent } = options;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const hub = new SubscriptionHub(
    (conversationId, { from, signal }) =>
      subscribe(agent.client, conversationId, { from, signal, waitMs: options.pollWaitMs }),
    options,
  );
  /** Ends each open event stream, for `close`. */
  const streams = new Set<() => void>();
  const app = new Hono();
  if (options.corsOrigin !== undefined) app.use('*', cors({ origin: options.corsOrigin }));

  app.get('/healthz', (c) => c.json({ ok: true, subscriptions: hub.subscriptions }));
  mountChatPage(app);

  app.get('/conversations/:id/events', (c) => {
    const conversationId = c.req.param('id');
    const from = resumeOffset(c.req.header('last-event-id'), c.req.query('from'));
    return streamSSE(c, async (stream) => {
      let finish!: () => void;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      // Writes are chained so events go out in order even when the client reads slowly.
      let writing = Promise.resolve();
      const write = (message: Parameters<typeof stream.writeSSE>[0]) => {
        writing = writing.then(() => stream.writeSSE(message)).catch(finish);
      };
      const unwatch = hub.watch(
        conversationId,
        {
          event: (event: StreamEvent) =>
            write({ id: String(event.offset), event: event.type, data: JSON.stringify(event) }),
          end: () => {
            write({ event: 'end', data: JSON.stringify({ conversationId, reason: 'ended' }) });
            void writing.then(finish);
          },
          error: (error) =>
            write({
              event: 'stream_error',
              data: JSON.stringify({ message: errorMessage(error) }),
            }),
        },
        from,
      );
      const keepAlive = setInterval(() => {
        writing = writing.then(() => stream.write(': keep-alive\n\n')).then(() => undefined, finish);
      }, keepAliveMs);
      stream.onAbort(finish);
      streams.add(finish);
      try {
        await finished;
      } finally {
        streams.delete(finish);
        clearInterval(keepAlive);
        unwatch();
      }
    });
  });

  app.post('/conversations/:id/messages', async (c) => {
    const conversationId = c.req.param('id');
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json(problem('InvalidBody', 'The body must be JSON: {"content": "...", "id": "optional id"}.'), 400);
    }
    const { content, id } = (body ?? {}) as { content?: unknown; id?: unknown };
    if (typeof content !== 'string' || (id !== undefined && typeof id !== 'string')) {
      return c.json(problem('InvalidBody', 'Expected {"content": string, "id"?: string}.'), 400);
    }
    try {
      const sent = await agent.send(conversationId, content, id === undefined ? {} : { messageId: id });
      return c.json(sent, 202);
    } catch (error) {
      const name = error instanceof Error ? error.name : 'Error';
      const status = errorStatus[name];
      if (status === undefined) throw error;
      return c.json(problem(name, (error as Error).message), status);
    }
  });

  app.onError((error, c) => c.json(problem('InternalError', errorMessage(error)), 500));

  const close = async () => {
    // A stream whose connection the server drops does not always hear of it: end each one, with its keep-alive.
    for (const finish of streams) finish();
    await hub.close();
  };
  return { app, hub, close };
}

function problem(type: string, message: string) {
  return { error: { type, message } };
}

/** `Last-Event-ID` is the last offset received, so resume after it; `?from` names the first offset wanted. */
function resumeOffset(lastEventId: string | undefined, from: string | undefined): number | undefined {
  const last = lastEventId === undefined ? NaN : Number(lastEventId);
  if (Number.isInteger(last) && last >= 0) return last + 1;
  const first = from === undefined ? NaN : Number(from);
  return Number.isInteger(first) && first >= 0 ? first : undefined;
}
