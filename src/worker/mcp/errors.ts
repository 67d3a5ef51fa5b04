import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { causeChain, DurableAgentError } from '../../shared/errors.js';

/**
 * The errors the pool throws. The pool knows the transports, so it decides whether a request left the worker;
 * the tool activity decides what that means for a retry (see `callToolFailure` in src/worker/activities/tool-calls/call.ts).
 */

/** No configured, enabled server offers this tool (any more): retrying cannot help. */
export class McpToolNotConfiguredError extends DurableAgentError {
  constructor(
    message: string,
    readonly server: string,
    readonly tool: string,
  ) {
    super(message);
  }
}

/**
 * The server could not be reached, or the connection failed during a request.
 * `requestSent: false` means the tool certainly did not run (spawn or connect failed, the session was gone, the
 * connection was refused); `true` means it may have run (the server died or the connection dropped mid-call, the call
 * timed out, an HTTP 5xx answer).
 */
export class McpTransportError extends DurableAgentError {
  readonly server: string;
  readonly requestSent: boolean;
  /** False when retrying will not help without a person (e.g. HTTP 401/403). */
  readonly retryable: boolean;
  /** True when the call ran into its `timeoutMs`. */
  readonly timedOut: boolean;

  constructor(
    message: string,
    options: { server: string; requestSent: boolean; retryable?: boolean; timedOut?: boolean; cause?: unknown },
  ) {
    super(message, { cause: options.cause });
    this.server = options.server;
    this.requestSent = options.requestSent;
    this.retryable = options.retryable ?? true;
    this.timedOut = options.timedOut ?? false;
  }
}

/** The server answered the request with a JSON-RPC error (e.g. invalid arguments): the model should see it. */
export class McpProtocolError extends DurableAgentError {
  constructor(
    message: string,
    readonly server: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/**
 * The server does not know the task, or answered about another: a JSON-RPC error to a request about it (-32602
 * "Task not found" for an unknown or expired one), or a session that is gone. The workflow tells the model.
 */
export class TaskRefusedError extends Error {
  override readonly name = 'TaskRefusedError';
}

/** Node's network error codes that mean nothing reached the server. */
const NOT_SENT_NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** How a raw error from the SDK during a request is to be read. */
export type RequestFailure =
  | { kind: 'session_lost' }
  | { kind: 'not_sent'; retryable: boolean }
  /** An HTTP 4xx answer that retrying cannot change (401/403: our credentials; others: the request or URL). */
  | { kind: 'rejected'; status: number }
  | { kind: 'sent'; timedOut: boolean; connectionBroken: boolean }
  | { kind: 'protocol'; code: number };

/** Read an error thrown by `client.request`/`client.callTool` (not by a cancellation: check the signal first). */
export function describeRequestFailure(error: unknown): RequestFailure {
  if (error instanceof SdkHttpError) {
    const status = error.status;
    // 404 on a request with a session id: the server forgot the session (restart, expiry) and did not run anything.
    if (status === 404) return { kind: 'session_lost' };
    // Servers built from the SDK's own examples (server-everything among them) answer an unknown session with
    // 400 "No valid session ID provided" instead of 404; a 400 means nothing ran, so treating it alike is safe.
    if (status === 400 && /session/i.test(error.message)) return { kind: 'session_lost' };
    if (isFinalHttpStatus(status)) return { kind: 'rejected', status };
    return { kind: 'sent', timedOut: false, connectionBroken: status < 0 };
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return { kind: 'sent', timedOut: true, connectionBroken: false };
    if (error.code === SdkErrorCode.ConnectionClosed) return { kind: 'sent', timedOut: false, connectionBroken: true };
    // The SDK rejects with this before writing anything when the transport has already gone away.
    if (error.code === SdkErrorCode.NotConnected) return { kind: 'not_sent', retryable: true };
  }
  if (error instanceof ProtocolError) return { kind: 'protocol', code: error.code };
  if (error instanceof Error) {
    if (NOT_SENT_NETWORK_CODES.has(networkErrorCode(error) ?? '')) return { kind: 'not_sent', retryable: true };
  }
  return { kind: 'sent', timedOut: false, connectionBroken: true };
}

/** How a failure to start a server or to open a session (spawn, `initialize`) is to be read. */
export type ConnectFailure =
  /** Retrying cannot help without a person: the command is missing or not executable, or the URL answered 4xx. */
  | { kind: 'cannot_start'; code: string }
  | { kind: 'rejected'; status: number }
  /** Anything else (refused, reset, timed out, exited at start, 5xx): it may work on the next attempt. */
  | { kind: 'unreachable' };

/** Spawn errors that mean the command cannot be run as configured. */
const CANNOT_START_CODES = new Set(['ENOENT', 'EACCES', 'ENOTDIR', 'EISDIR']);

export function describeConnectFailure(error: unknown): ConnectFailure {
  if (error instanceof SdkHttpError) {
    // No session exists yet, so a 404 is the URL's, not a forgotten session's.
    const status = error.status;
    if (isFinalHttpStatus(status) || status === 404) return { kind: 'rejected', status };
    return { kind: 'unreachable' };
  }
  const code = error instanceof Error ? networkErrorCode(error) : undefined;
  if (code !== undefined && CANNOT_START_CODES.has(code)) return { kind: 'cannot_start', code };
  return { kind: 'unreachable' };
}

/**
 * What an HTTP 4xx answer means for the configuration, for error messages. `oauth`: the server is authorized with
 * OAuth (src/worker/mcp/oauth/), whose client has already asked for a new token or more scope before giving up.
 */
export function rejectionText(status: number, oauth = false): string {
  if ((status === 401 || status === 403) && oauth) {
    return (
      `refused our OAuth token (HTTP ${status}) even after a new one was obtained: check "oauth" (its "scopes") ` +
      'in the MCP config, or log in again'
    );
  }
  if (status === 401 || status === 403) {
    return `rejected our credentials (HTTP ${status}): check the headers in the MCP config`;
  }
  if (status === 404) return 'has no MCP endpoint there (HTTP 404): check the url in the MCP config';
  return `refused the request (HTTP ${status})`;
}

/** A 4xx other than 404 (a lost session, within a session), 408 (timeout) and 429 (rate limit): no retry changes it. */
function isFinalHttpStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 404 && status !== 408 && status !== 429;
}

/** Characters of an HTTP error's body kept in an error message. */
const ANSWER_TEXT_CHARACTERS = 500;

/**
 * The body of the server's HTTP error answer, when the SDK's message leaves it out (its version probe does): what the
 * server said is often the only clue to a wrong header. The pool redacts it like every message (src/worker/mcp/redaction.ts).
 */
export function httpAnswerText(error: unknown): string {
  if (!(error instanceof SdkHttpError)) return '';
  const text = typeof error.data.text === 'string' ? error.data.text.trim() : '';
  if (text === '' || error.message.includes(text)) return '';
  return `; the server answered: ${text.slice(0, ANSWER_TEXT_CHARACTERS)}`;
}

/** `fetch` wraps socket errors: `TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })`. */
export function networkErrorCode(error: Error): string | undefined {
  for (const cause of causeChain(error)) {
    // The SDK's own errors carry codes of their own (`ERA_NEGOTIATION_FAILED`) around the socket's.
    if (cause instanceof SdkError || cause instanceof ProtocolError) continue;
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * An HTTP server configured with `"oauth": {"grant": "authorization_code"}` has no usable login on this worker: none
 * was stored, or the stored one expired and could not be refreshed. Only a person can fix it (`durable-agent mcp
 * login SERVER`), so it is not retryable; nothing was sent to the server's tools.
 */
export class McpAuthorizationRequiredError extends McpTransportError {
  constructor(server: string, problem: string) {
    super(
      `MCP server "${server}" needs a person to authorize it: ${problem}. ` +
        `Run \`durable-agent mcp login ${server}\` as the worker's user, with the worker's MCP config and token directory.`,
      { server, requestSent: false, retryable: false },
    );
  }
}
