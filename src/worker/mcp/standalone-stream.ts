import type { FetchLike } from '@modelcontextprotocol/client';
import { errorMessage } from '../../shared/errors.js';

/**
 * The stream a 2025-11-25 Streamable HTTP session opens for what the server sends outside any response: the SDK's
 * client opens it with a `GET` right after `notifications/initialized`, without waiting for it. A server may send a
 * tool call's question there instead of on the call's own response stream (an SDK v2 server's `ctx.mcpReq.elicitInput`
 * does), and a server drops what it sends there while that stream is not open yet. So a call that reached the server
 * before the `GET` did has its question lost, and waits for an answer nobody was asked for. A session is therefore
 * handed out only once the server has answered that `GET`, which opens the stream before the answer leaves.
 */

/**
 * How long a new session waits for the server to answer its `GET` before it is used anyway (a server that holds the
 * answer back until it has something to send). A server answers at once: with the stream, or 405 when it has none.
 */
export const STANDALONE_STREAM_WAIT_MS = 5_000;

export class StandaloneStream {
  /** Set once the server has answered the `GET` (or it failed): why there is no stream, or '' when there is. */
  private outcome: string | undefined;
  private readonly answered: Promise<void>;
  private settle!: (outcome: string) => void;
  private readonly url: string;
  /** True once the server gave the client a session id: only a session has the stream. */
  private session = false;

  /** @param url the session's MCP endpoint: only a `GET` of it opens the stream (OAuth discovery fetches others) */
  constructor(url: string) {
    this.url = new URL(url).href;
    this.answered = new Promise((resolve) => {
      this.settle = (outcome) => {
        this.outcome ??= outcome;
        resolve();
      };
    });
  }

  /** The transport's `fetch`: `base` (default the global one), noting the session id and the answer to the `GET`. */
  observe(base?: FetchLike): FetchLike {
    return async (url, init) => {
      const endpoint = String(url) === this.url;
      const opensStream = endpoint && (init?.method ?? 'GET').toUpperCase() === 'GET';
      try {
        const response = await (base ?? fetch)(url, init);
        if (endpoint && response.headers.has('mcp-session-id')) this.session = true;
        // 405: the server has no such stream, so it sends nothing there to lose.
        if (opensStream)
          this.settle(response.ok || response.status === 405 ? '' : `it answered HTTP ${response.status}`);
        return response;
      } catch (error) {
        if (opensStream) this.settle(`it failed: ${errorMessage(error)}`);
        throw error;
      }
    };
  }

  /**
   * Resolves once the server has answered the `GET` of a session, or after `timeoutMs`. When the stream is not open
   * then (and the server has not said it has none), `warn` gets why: the SDK does not send a failed `GET` again.
   */
  async opened(warn: (problem: string) => void, timeoutMs = STANDALONE_STREAM_WAIT_MS): Promise<void> {
    // Without a session (2026-07-28, or a stateless server) there is no session stream to wait for.
    if (!this.session) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    try {
      await Promise.race([this.answered, timedOut]);
    } finally {
      clearTimeout(timer);
    }
    const why = this.outcome ?? `it did not answer within ${timeoutMs} ms`;
    if (why !== '') {
      warn(
        `did not open its session's stream for messages outside responses (${why}): a question it sends there before ` +
          'the stream is open is lost.',
      );
    }
  }
}
