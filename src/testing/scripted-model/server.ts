import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setMaxListeners } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type OpenAI from 'openai';
import { ConversationCursor, conversationOf, DEFAULT_CONVERSATION } from './cursor.js';
import type { RecordedRequest } from './recorded-request.js';
import { anthropicMessages } from './anthropic-messages.js';
import { chatCompletions } from './chat-completions.js';
import { openAIResponses } from './openai-responses.js';
import { errorBody, requestId, ScriptedModelErrorCode, type CompletionStep, type ResponseContext } from './response.js';
import type { WireFormat } from './wire-format.js';
import { validateScript, validateStep, type Script, type ScriptStep } from './script.js';
import { writeEventStream } from './sse.js';
import { errorMessage } from '../../shared/errors.js';
import { earlyAnswer, type SummaryAnswer } from './context-window.js';
import { manageContext } from './context-management.js';

export interface ScriptedModelOptions {
  /** The steps to answer with, in order, for each conversation: an array of steps, or a function. */
  script: Script;
  /** TCP port to listen on. Default: 0, a free port the system picks. */
  port?: number;
  /** Interface to listen on. Default: `'127.0.0.1'`. */
  host?: string;
  /** Names the script in error messages, e.g. its file. Default: `'the script'`. */
  name?: string;
  /** Called with each chat completion request once it is answered, e.g. to log it. Default: none. */
  onRequest?: (request: RecordedRequest) => void;
  /**
   * Refuse every request over this many tokens (a token per 4 characters of its body) with the API's own
   * context-length error, without taking a step of the script. Default: no limit.
   */
  contextWindow?: number;
  /**
   * Answer compaction's summary requests (their idempotency key ends in `/compaction-<n>`) without taking a step of
   * the script: `user-lines` keeps the earlier summary and each user message as a line; a function returns the
   * summary. Default: the script answers them like any request.
   */
  summaries?: SummaryAnswer;
}

export interface ScriptedModel extends AsyncDisposable {
  /** For the `openai` client's `baseURL`, e.g. `http://127.0.0.1:40123/v1`. */
  readonly baseUrl: string;
  /** For `@anthropic-ai/sdk`'s `baseURL`, which it extends with `/v1/messages`: e.g. `http://127.0.0.1:40123`. */
  readonly anthropicBaseUrl: string;
  readonly port: number;
  /** Every chat completion request so far, in order of arrival. */
  readonly requests: readonly RecordedRequest[];
  /** The requests of one conversation (a workflow id, or `DEFAULT_CONVERSATION`), in order of arrival. */
  requestsFor(conversation: string): RecordedRequest[];
  /** Forget the requests and start every conversation from the first step again, optionally of a new script. */
  reset(script?: Script): void;
  /** Stop listening and drop open connections, including streams and delays under way. */
  close(): Promise<void>;
}

/** Now, in ms since the epoch with fractions: comparable with `performance.now()` readings of other processes. */
function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_NAME = 'the script';
/** What `GET /v1/models` lists besides the models that requests named. */
const SCRIPTED_MODEL_ID = 'scripted-model';

/** Names of the endpoints, listed in the answer to an unknown one. */
const ENDPOINTS = [
  'POST /v1/chat/completions',
  'POST /v1/messages',
  'POST /v1/responses',
  'GET /v1/models',
  'GET /_scripted/requests[?conversation=]',
  'POST /_scripted/reset',
];

/** The model APIs by endpoint. */
const FORMATS: Record<string, WireFormat> = {
  'POST /v1/chat/completions': chatCompletions,
  'POST /v1/messages': anthropicMessages,
  'POST /v1/responses': openAIResponses,
};

/** Answers in the shape the endpoint's client expects; thrown by handlers and turned into a response. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: ScriptedModelErrorCode,
  ) {
    super(message);
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(text);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

function parseModelRequest(text: string, format: WireFormat): Record<string, unknown> & { model: string } {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalidRequest('The request body is not JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidRequest('The request body must be a JSON object.');
  }
  const problem = format.problem(body as Record<string, unknown>);
  if (problem !== undefined) throw invalidRequest(problem);
  return body as Record<string, unknown> & { model: string };
}

/** `POST /_scripted/reset` takes an optional body `{"script": [...]}` to serve a new script from then on. */
function parseResetScript(text: string): Script | undefined {
  if (text.trim() === '') return undefined;
  try {
    const body = JSON.parse(text) as { script?: unknown } | null;
    return body?.script === undefined ? undefined : validateScript(body.script, 'the script of POST /_scripted/reset');
  } catch (error) {
    throw invalidRequest(`Cannot reset: ${(error as Error).message}`);
  }
}

function invalidRequest(message: string): HttpError {
  return new HttpError(400, message, 'invalid_request_error', ScriptedModelErrorCode.InvalidRequest);
}

function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return DEFAULT_HOST;
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Start an OpenAI-compatible chat completions server that answers from a script, one cursor per conversation.
 * See docs/scripted-model.md for the script format.
 */
export async function startScriptedModel(options: ScriptedModelOptions): Promise<ScriptedModel> {
  const name = options.name ?? DEFAULT_NAME;
  const host = options.host ?? DEFAULT_HOST;
  const created = Math.floor(Date.now() / 1000);
  const closing = new AbortController();
  // Every delayed answer and stream under way listens to it: fifty at once is a benchmark, not a leak.
  setMaxListeners(0, closing.signal);

  let script = validateScript(options.script, name);
  let requests: RecordedRequest[] = [];
  let requestsByConversation = new Map<string, RecordedRequest[]>();
  let cursors = new Map<string, ConversationCursor>();
  const modelsSeen = new Set<string>([SCRIPTED_MODEL_ID]);

  async function resolveStep(stepIndex: number, request: RecordedRequest): Promise<ScriptStep | undefined> {
    let step: unknown;
    if (typeof script === 'function') {
      step = await script(request, { stepIndex });
    } else {
      const entry = script[stepIndex];
      step = typeof entry === 'function' ? await entry(request) : entry;
    }
    return step === undefined ? undefined : validateStep(step, stepIndex, name);
  }

  function cursorOf(conversation: string): ConversationCursor {
    let cursor = cursors.get(conversation);
    if (cursor === undefined) {
      cursor = new ConversationCursor(resolveStep);
      cursors.set(conversation, cursor);
    }
    return cursor;
  }

  function record(request: RecordedRequest): void {
    requests.push(request);
    let conversationRequests = requestsByConversation.get(request.conversation);
    if (conversationRequests === undefined) {
      conversationRequests = [];
      requestsByConversation.set(request.conversation, conversationRequests);
    }
    conversationRequests.push(request);
  }

  function pastEndMessage(conversation: string, stepIndex: number): string {
    const whose =
      conversation === DEFAULT_CONVERSATION
        ? `the default conversation (requests without an idempotency key of the form <workflowId>/<runId>/turn-<n>/round-<r> share one cursor)`
        : `conversation "${conversation}"`;
    const extent =
      typeof script === 'function'
        ? `the script function returned no step for step ${stepIndex}`
        : `the script has ${script.length} step${script.length === 1 ? '' : 's'} and this request needed step ${stepIndex}`;
    return (
      `Scripted model: ${whose} ran past the end of ${name}: ${extent}. ` +
      `Add steps to the script, or find out why the agent called the model more often than the test expected.`
    );
  }

  async function answerModelRequest(
    request: IncomingMessage,
    response: ServerResponse,
    format: WireFormat,
  ): Promise<void> {
    const text = await readBody(request);
    const body = parseModelRequest(text, format);
    const headers = headersOf(request);
    const idempotencyKey = headers['idempotency-key'] ?? null;
    const conversation = conversationOf(idempotencyKey);
    const chat =
      format.api === 'chat-completions' ? (body as unknown as OpenAI.Chat.ChatCompletionCreateParams) : undefined;
    const { messages = [], tools, tool_choice, ...requestOptions } = chat ?? { model: body.model };
    const recorded: RecordedRequest = {
      api: format.api,
      body: body as RecordedRequest['body'],
      sequence: requests.length,
      conversation,
      idempotencyKey,
      stepIndex: null,
      replayed: false,
      status: 200,
      failure: null,
      messages,
      tools: tools ?? null,
      toolChoice: tool_choice ?? null,
      options: requestOptions,
      headers,
      receivedAt: new Date().toISOString(),
      timing: { receivedMs: epochMs(), firstTextMs: null },
    };
    record(recorded);
    modelsSeen.add(body.model);

    try {
      // Checked as the real APIs check it: before the window, and whatever the script says.
      const managing = manageContext(format.api, body, headers);
      if (managing !== undefined && 'problem' in managing) throw invalidRequest(managing.problem);
      const early = earlyAnswer(options, recorded, text.length);
      if (early !== undefined && 'refusal' in early) {
        recorded.status = 400;
        return sendJson(response, 400, early.refusal);
      }
      if (early !== undefined) {
        const context = { conversation, stepIndex: -1 - recorded.sequence, model: body.model, created };
        return await answerCompletion(response, { content: early.summary }, body, format, recorded, {
          ...context,
          requestLength: text.length,
        });
      }
      let selection;
      try {
        selection = await cursorOf(conversation).select(recorded, idempotencyKey);
      } catch (error) {
        const message = `Scripted model: a step of ${name} failed for conversation "${conversation}": ${(error as Error).message}`;
        throw new HttpError(500, message, 'server_error', ScriptedModelErrorCode.StepFailed);
      }
      const { stepIndex, step, replayed, attempt } = selection;
      recorded.replayed = replayed;
      if (step === undefined) {
        throw new HttpError(
          500,
          pastEndMessage(conversation, stepIndex),
          'server_error',
          ScriptedModelErrorCode.ScriptExhausted,
        );
      }
      recorded.stepIndex = stepIndex;
      const delayAttempts = 'error' in step ? undefined : step.delayAttempts;
      if (step.delayMs && attempt <= (delayAttempts ?? Infinity)) {
        await sleep(step.delayMs, undefined, { signal: closing.signal });
      }
      if (response.destroyed) return;

      if ('error' in step) {
        const { status, headers: errorHeaders = {}, body: errorBodyOverride } = step.error;
        recorded.status = status;
        if (typeof errorBodyOverride === 'string') {
          response.writeHead(status, { 'content-type': 'text/plain', ...errorHeaders });
          response.end(errorBodyOverride);
        } else {
          sendJson(
            response,
            status,
            errorBodyOverride ?? format.scriptedErrorBody(status, stepIndex, name),
            errorHeaders,
          );
        }
        return;
      }

      await answerCompletion(response, step, body, format, recorded, {
        conversation,
        stepIndex,
        model: body.model,
        created,
        requestLength: text.length,
        ...(managing ? { managed: managing.managed } : {}),
      });
    } catch (error) {
      if (error instanceof HttpError) {
        recorded.status = error.status;
        recorded.failure = error.message;
      }
      throw error;
    } finally {
      options.onRequest?.(recorded);
    }
  }

  function answerCompletion(
    response: ServerResponse,
    step: CompletionStep,
    body: Record<string, unknown>,
    format: WireFormat,
    recorded: RecordedRequest,
    context: ResponseContext,
  ): Promise<void> | void {
    response.setHeader('x-request-id', requestId(context.conversation, context.stepIndex));
    if (body.stream === true) {
      return writeEventStream(response, format.events(step, context, body), {
        chunkDelayMs: step.chunkDelayMs,
        failAfterChunks: step.failAfterChunks,
        signal: closing.signal,
        ...format.framing,
        written: (chunks) => {
          if (recorded.timing.firstTextMs === null && chunks.some((chunk) => format.carriesText(chunk))) {
            recorded.timing.firstTextMs = epochMs();
          }
        },
      });
    }
    // Without a stream there is nothing to send before the drop: the client sees the connection close unanswered.
    if (step.failAfterChunks !== undefined) return void response.destroy();
    sendJson(response, 200, format.answer(step, context));
    if (step.content) recorded.timing.firstTextMs = epochMs();
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://scripted-model');
    const endpoint = `${request.method} ${url.pathname.replace(/\/+$/, '')}`;
    const format = FORMATS[endpoint];
    if (format !== undefined) return answerModelRequest(request, response, format);
    switch (endpoint) {
      case 'GET /v1/models':
        return sendJson(response, 200, {
          object: 'list',
          data: [...modelsSeen].map((id) => ({ id, object: 'model', created, owned_by: 'durable-agent' })),
        });
      case 'GET /_scripted/requests': {
        const conversation = url.searchParams.get('conversation');
        return sendJson(response, 200, conversation === null ? requests : model.requestsFor(conversation));
      }
      case 'POST /_scripted/reset': {
        model.reset(parseResetScript(await readBody(request)));
        response.writeHead(204).end();
        return;
      }
      default:
        throw new HttpError(
          404,
          `Unknown endpoint ${endpoint}. The scripted model serves ${ENDPOINTS.join(', ')}.`,
          'invalid_request_error',
          ScriptedModelErrorCode.NotFound,
        );
    }
  }

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      // Past the headers, or closing, the only way left to tell the client is to drop the connection.
      if (response.headersSent || response.destroyed || closing.signal.aborted) return void response.destroy();
      if (error instanceof HttpError) {
        // A script that ran out or a failing step will not get better on a retry: tell the client (the `openai` client
        // and durable-agent's model activity both honour this header) so that a test fails now instead of retrying.
        const headers: Record<string, string> = error.status >= 500 ? { 'x-should-retry': 'false' } : {};
        const format = FORMATS[`${request.method} ${new URL(request.url ?? '/', 'http://scripted-model').pathname}`];
        const body = format
          ? format.errorBody(error.status, error.message, error.type, error.code)
          : errorBody(error.message, error.type, error.code);
        return sendJson(response, error.status, body, headers);
      }
      const message = `Scripted model: ${errorMessage(error)}`;
      sendJson(response, 500, errorBody(message, 'server_error', null));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closed: Promise<void> | undefined;
  const model: ScriptedModel = {
    baseUrl: `http://${urlHost(host)}:${port}/v1`,
    anthropicBaseUrl: `http://${urlHost(host)}:${port}`,
    port,
    get requests() {
      return requests;
    },
    requestsFor(conversation) {
      return [...(requestsByConversation.get(conversation) ?? [])];
    },
    reset(newScript) {
      if (newScript !== undefined) script = validateScript(newScript, name);
      requests = [];
      requestsByConversation = new Map();
      cursors = new Map();
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
    [Symbol.asyncDispose]() {
      return model.close();
    },
  };
  return model;
}
