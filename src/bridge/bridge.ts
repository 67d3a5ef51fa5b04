import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES } from '../shared/search-attributes.js';
import { conversationWorkflowId } from '../workflows/definitions.js';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { subscribe } from '../client/stream.js';
import type { StreamEvent } from '../workflows/stream-events.js';
import { decideApproval, type ApprovalDeciding } from './approval-route.js';
import { SubscriptionHub, type SubscriptionHubOptions } from './hub.js';
import { addInputRoute, type InputAnsweringClient } from './input-route.js';
import { isEncryptionKeyError } from '../shared/encryption-errors.js';
import { causeChain, errorMessage } from '../shared/errors.js';
import {
  authentication,
  authenticationEnabled,
  type AuthenticationOptions,
  type TenantLookup,
} from './authentication.js';
import { browserSafety, type BrowserSafetyOptions } from './browser-safety.js';
import { clientRefusal, problem, ServeErrorType } from './http-errors.js';
import { temporalReadiness } from './readiness.js';
import { requestLog, type RequestLogger } from './request-log.js';
import { ServeConfigError } from './serve-tokens.js';
import { mountChatPage } from './chat-page.js';

/** What the bridge needs of `DurableAgentClient`: its Temporal client, `send`, `approve`, `deny` and `answerInput`. */
export interface BridgeAgentClient extends ApprovalDeciding, InputAnsweringClient {
  readonly client: Client;
  send(
    conversationId: string,
    content: string,
    options?: { messageId?: string; settings?: { tenant?: string } },
  ): Promise<{ conversationId: string; messageId: string; runId: string; created: boolean; reopened: boolean }>;
}

export interface StreamingBridgeOptions extends SubscriptionHubOptions, AuthenticationOptions, BrowserSafetyOptions {
  agent: BridgeAgentClient;
  /** Interval of the SSE keep-alive comment, so proxies do not close an idle stream. Default 15 s. */
  keepAliveMs?: number;
  /** Receives one line per request (method, path, status, duration; never a token or the query); default none. */
  log?: RequestLogger;
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
 * - `POST /conversations/:id/approvals/:callId` with `{"decision": "approve" | "deny", "reason"?, "arguments"?,
 *   "always"?, "by"?}`: decide a tool call that waits for a person (src/bridge/approval-route.ts); answers 200 with
 *   the `ApprovalDecision`.
 * - `POST /conversations/:id/inputs/:requestId` with `{"action": "accept"|"decline"|"cancel", "content"?, "by"?}`:
 *   answer an MCP server's question (./input-route.ts).
 * - `GET /`: the chat page (src/bridge/page/), which uses the routes above.
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
  // Every route, by rule (src/bridge/routes.ts): routes added below are covered without a word of their own.
  if (options.log !== undefined) app.use(requestLog(options.log));
  for (const middleware of browserSafety({ ...options, allowedOrigins: allowedOrigins(options) })) app.use(middleware);
  app.use(authentication(options, conversationTenant(agent.client)));

  app.get('/healthz', (c) => c.json({ ok: true, subscriptions: hub.subscriptions }));
  mountChatPage(app);

  const readiness = temporalReadiness(agent.client);
  app.get('/readyz', async (c) => {
    const ready = await readiness();
    if (ready.ready) return c.json({ ready: true });
    return c.json(
      { ready: false, ...problem(ServeErrorType.TemporalUnreachable, `Temporal cannot be reached: ${ready.reason}`) },
      503,
    );
  });

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

  app.post('/conversations/:id/approvals/:callId', decideApproval(agent));

  app.post('/conversations/:id/messages', async (c) => {
    const conversationId = c.req.param('id');
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      return c.json(
        problem(ServeErrorType.InvalidBody, 'The body must be JSON: {"content": "...", "id": "optional id"}.'),
        400,
      );
    }
    const { content, id } = (body ?? {}) as { content?: unknown; id?: unknown };
    if (typeof content !== 'string' || (id !== undefined && typeof id !== 'string')) {
      return c.json(problem(ServeErrorType.InvalidBody, 'Expected {"content": string, "id"?: string}.'), 400);
    }
    try {
      // A token that acts for a tenant creates its conversations for that tenant (a running one keeps its own).
      const tenant = c.get('durableAgentTenant');
      const sent = await agent.send(conversationId, content, {
        ...(id === undefined ? {} : { messageId: id }),
        ...(tenant === undefined ? {} : { settings: { tenant } }),
      });
      return c.json(sent, 202);
    } catch (error) {
      return clientRefusal(c, error, errorStatus);
    }
  });

  addInputRoute(app, agent);

  app.onError((error, c) => {
    // Keys that do not match the worker's are this server's configuration: named, so an operator sees what to fix.
    const keyError = [...causeChain(error)].find(isEncryptionKeyError);
    if (keyError !== undefined) return c.json(problem(keyError.name, keyError.message), 500);
    return c.json(problem(ServeErrorType.InternalError, errorMessage(error)), 500);
  });

  const close = async () => {
    // A stream whose connection the server drops does not always hear of it: end each one, with its keep-alive.
    for (const finish of streams) finish();
    await hub.close();
  };
  return { app, hub, close };
}

/** The tenant of a conversation's latest run (`DurableAgentTenant`), or null when it has none yet. */
function conversationTenant(client: Client): TenantLookup {
  return async (conversationId) => {
    try {
      const description = await client.workflow.getHandle(conversationWorkflowId(conversationId)).describe();
      return description.typedSearchAttributes.get(DURABLE_AGENT_SEARCH_ATTRIBUTES.tenant);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return null;
      throw error;
    }
  };
}

/** The origins browsers may call from; `*` only where requests need a token. */
export function allowedOrigins(options: Omit<StreamingBridgeOptions, 'agent'>): string[] {
  const origins = [...(options.allowedOrigins ?? [])];
  if (origins.includes('*') && !authenticationEnabled(options)) {
    throw new ServeConfigError(
      'Allowing every origin (*) without authentication would let any web page a user visits read and post into ' +
        'conversations. Name the origins, or set DURABLE_AGENT_SERVE_TOKEN or DURABLE_AGENT_SERVE_SECRET.',
    );
  }
  return origins;
}

/** `Last-Event-ID` is the last offset received, so resume after it; `?from` names the first offset wanted. */
function resumeOffset(lastEventId: string | undefined, from: string | undefined): number | undefined {
  const last = lastEventId === undefined ? NaN : Number(lastEventId);
  if (Number.isInteger(last) && last >= 0) return last + 1;
  const first = from === undefined ? NaN : Number(from);
  return Number.isInteger(first) && first >= 0 ? first : undefined;
}
