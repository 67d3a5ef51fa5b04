// @ts-check
/**
 * The chat page's side of the bridge's HTTP API (docs/streaming.md): the event stream with its resumption, and the
 * writes (messages, approval decisions, answers to input requests). Relative URLs, so the page also works behind a
 * reverse proxy that serves it under a path.
 */

/** Every event type the bridge sends, stream events and its own (`end`, `stream_error`). */
export const EVENT_TYPES = [
  'turn_started',
  'model_attempt_started',
  'text_delta',
  'servers_unavailable',
  'tool_call_started',
  'tool_call_finished',
  'approval_requested',
  'approval_decided',
  'input_requested',
  'input_answered',
  'turn_finished',
];

/** How long the page waits before it opens the stream again itself, when the browser gave up on it. */
const REOPEN_MS = 2_000;
const MAX_REOPEN_MS = 30_000;

/**
 * A conversation's event stream. The browser's EventSource reconnects by itself with `Last-Event-ID` (the offset of
 * the last event), and the bridge resumes after it; when the browser gives up (a refused or failed response), the
 * stream is opened again with `?from=` the next offset. Events at or before the last offset seen are dropped and
 * counted in `duplicates`, so nothing is shown twice whatever the server sends.
 */
export class ConversationStream {
  /**
   * @param {{ conversationId: string, token: string | undefined, onEvent: (event: any) => void,
   *   onStatus: (state: string, detail?: string) => void }} options
   */
  constructor(options) {
    this.options = options;
    /** @type {number | undefined} */
    this.lastOffset = undefined;
    this.duplicates = 0;
    this.reconnects = 0;
    /** @type {EventSource | undefined} */
    this.source = undefined;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;
    this.closed = false;
    this.delay = REOPEN_MS;
  }

  open() {
    const { conversationId, token } = this.options;
    const url = new URL(`conversations/${encodeURIComponent(conversationId)}/events`, document.baseURI);
    if (this.lastOffset !== undefined) url.searchParams.set('from', String(this.lastOffset + 1));
    if (token) url.searchParams.set('access_token', token);
    const source = new EventSource(url);
    this.source = source;
    let opened = false;
    source.onopen = () => {
      if (opened || this.lastOffset !== undefined) this.reconnects++;
      opened = true;
      this.delay = REOPEN_MS;
      this.options.onStatus('connected');
    };
    source.onerror = () => {
      if (this.closed) return;
      if (source.readyState === EventSource.CLOSED) void this.refused(url);
      else this.options.onStatus('reconnecting', 'the connection dropped; the browser reconnects');
    };
    for (const type of EVENT_TYPES) source.addEventListener(type, (message) => this.receive(message));
    source.addEventListener('end', () => {
      this.close();
      this.options.onStatus('ended', 'the conversation has ended');
    });
    source.addEventListener('stream_error', (message) => {
      const data = parse(/** @type {MessageEvent} */ (message).data);
      this.options.onStatus('error', data?.message ?? 'the stream reported an error');
    });
  }

  /**
   * The browser gave up on the stream (a response that was not an event stream). A refused token (401, 403) is final
   * until the page gets a new one; anything else is tried again, waiting longer each time (up to 30 s).
   * @param {URL} url
   */
  async refused(url) {
    const refusal = await probe(url);
    if (this.closed) return;
    if (refusal && (refusal.status === 401 || refusal.status === 403)) {
      this.close();
      this.options.onStatus('error', `${refusal.message} Open the page again with a new token.`);
      return;
    }
    this.options.onStatus('reconnecting', refusal?.message ?? 'the stream was refused; opening it again');
    this.timer = setTimeout(() => this.open(), this.delay);
    this.delay = Math.min(this.delay * 2, MAX_REOPEN_MS);
  }

  /** @param {Event} message */
  receive(message) {
    const event = parse(/** @type {MessageEvent} */ (message).data);
    if (!event || typeof event.offset !== 'number') return;
    if (this.lastOffset !== undefined && event.offset <= this.lastOffset) {
      this.duplicates++;
      return;
    }
    this.lastOffset = event.offset;
    this.options.onEvent(event);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.source?.close();
  }
}

/**
 * Why the stream is refused: its status and the bridge's message, read from a plain request (EventSource does not
 * tell); `undefined` when it is not refused (or the server cannot be reached).
 * @param {URL} url @returns {Promise<{ status: number, message: string } | undefined>}
 */
async function probe(url) {
  const controller = new AbortController();
  try {
    const response = await fetch(url, { headers: { accept: 'text/event-stream' }, signal: controller.signal });
    if (response.ok) return undefined;
    const message = parse(await response.text())?.error?.message ?? `The server answered ${response.status}.`;
    return { status: response.status, message };
  } catch {
    return undefined;
  } finally {
    controller.abort();
  }
}

/** @param {string} text */
function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A refused write: the bridge's `{ error: { type, message } }`, or what went wrong on the way. */
export class RequestFailed extends Error {
  /** @param {string} type @param {string} message */
  constructor(type, message) {
    super(message);
    this.name = 'RequestFailed';
    this.type = type;
  }
}

/**
 * POST JSON to a conversation's route; resolves with the answer's JSON or rejects with `RequestFailed`.
 * @param {string} conversationId @param {string} path @param {unknown} body @param {string | undefined} token
 */
export async function post(conversationId, path, body, token) {
  const url = new URL(`conversations/${encodeURIComponent(conversationId)}/${path}`, document.baseURI);
  /** @type {Record<string, string>} */
  const headers = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  } catch (error) {
    throw new RequestFailed('NetworkError', `The server could not be reached (${String(error)}); try again.`);
  }
  const answer = parse(await response.text());
  if (response.ok) return answer;
  const problem = answer?.error;
  throw new RequestFailed(
    problem?.type ?? `HTTP ${response.status}`,
    problem?.message ?? `The server answered ${response.status} ${response.statusText}.`,
  );
}

/** A random id (for messages: sending the same id again does not queue the message twice). */
export function randomId() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
