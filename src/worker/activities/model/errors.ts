import { ApplicationFailure } from '@temporalio/common';
import { errorMessage, expectedFailure, FailureType } from '../../../shared/errors.js';
import type { ToolDefinition } from '../../../shared/types.js';
import { refusalLimits } from '../../../shared/model-windows.js';
import { providerErrors } from './provider-sdks.js';

/** A tool as a model call offered it: enough to say which MCP server a `tools[N]` in an error belongs to. */
export type OfferedTool = Pick<ToolDefinition, 'name' | 'server' | 'originalName'>;

/** The worker's settings a failure's advice names: they differ per provider. */
export interface ProviderSetup {
  /** The variable that holds the key, e.g. `OPENAI_API_KEY`. */
  keyVariable: string;
  /** The variable that holds the endpoint, e.g. `OPENAI_BASE_URL`. */
  baseUrlVariable: string;
}

export const OPENAI_SETUP: ProviderSetup = { keyVariable: 'OPENAI_API_KEY', baseUrlVariable: 'OPENAI_BASE_URL' };

/**
 * How a failed model call is retried, decided in one place, for the `openai` and `@anthropic-ai/sdk` clients alike. Temporal owns retries (the OpenAI client runs with
 * `maxRetries: 0`): 408, 409, 429 and 5xx retry, honouring `retry-after-ms` / `retry-after` and `x-should-retry`;
 * a quota 429 and other 4xx need a person and are not retried. Anthropic's 529 (overloaded) is a 5xx like any other.
 *
 * `tools` is the list the request offered, in order: a provider that rejects a tool names only its index
 * (`tools[15]`), so the failure also names that tool and its MCP server.
 */
export function toModelFailure(
  error: unknown,
  endpoint: string,
  tools: readonly OfferedTool[] = [],
  setup: ProviderSetup = OPENAI_SETUP,
): ApplicationFailure {
  if (error instanceof ApplicationFailure) return error;
  const { openai, anthropic } = providerErrors();
  if (error instanceof openai.APIConnectionTimeoutError || error instanceof anthropic.APIConnectionTimeoutError) {
    return failure(FailureType.ModelTimeout, `The model endpoint ${endpoint} did not answer in time.`, true);
  }
  if (error instanceof openai.APIConnectionError || error instanceof anthropic.APIConnectionError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return failure(
      FailureType.ModelConnectionError,
      `Could not reach the model endpoint ${endpoint}${cause}. Check ${setup.baseUrlVariable} and that the server is running.`,
      true,
    );
  }
  const http = httpErrorOf(error);
  if (http === undefined) {
    const message = errorMessage(error);
    return failure(FailureType.ModelInvalidResponse, `The model call failed: ${message}`, true);
  }
  const { status, headers, code } = http;
  const rejected = rejectedTools(`${http.param} ${http.message}`, tools);
  const named = rejected.map(({ index, tool }) => `tools[${index}] is ${describeTool(tool)}`).join('; ');
  const detail = `HTTP ${status}${code ? ` ${code}` : ''} from ${endpoint}: ${http.message}${named ? ` (${named})` : ''}`;
  const [type, retryable, classified] = classify(status, code, http.message, setup);
  const advice =
    type === FailureType.ModelBadRequest && rejected.length > 0
      ? "The model provider refused that tool's definition: fix it on its MCP server, or leave it out with the " +
        "server's denyTools."
      : classified;
  const shouldRetry = headers?.get('x-should-retry');
  const retry = shouldRetry === 'true' ? true : shouldRetry === 'false' ? false : retryable;
  return failure(type, `${detail}${advice ? ` ${advice}` : ''}`, retry, retryDelayMs(headers), {
    status,
    code,
    // What the refusal says of the window: compaction learns it (src/shared/model-windows.ts).
    ...(type === FailureType.ModelContextLengthExceeded ? { refusal: refusalLimits(http.message) } : {}),
    ...(rejected.length > 0
      ? { tools: rejected.map(({ index, tool }) => ({ index, name: tool.name, server: tool.server })) }
      : {}),
  });
}

/** What both SDKs' HTTP errors say: status, headers, the error's code (OpenAI `code`, Anthropic `error.type`). */
interface HttpError {
  status: number;
  headers: Headers | undefined;
  code: string | undefined;
  param: string;
  message: string;
}

function httpErrorOf(error: unknown): HttpError | undefined {
  const { openai, anthropic } = providerErrors();
  if (error instanceof openai.APIError && error.status !== undefined) {
    return {
      status: error.status as number,
      headers: error.headers as Headers | undefined,
      code: error.code ?? undefined,
      param: String(error.param ?? ''),
      message: String(error.message),
    };
  }
  if (error instanceof anthropic.APIError && error.status !== undefined) {
    return {
      status: error.status as number,
      headers: error.headers as Headers | undefined,
      code: error.type ?? undefined,
      param: '',
      message: error.apiMessage ?? String(error.message),
    };
  }
  return undefined;
}

/** The offered tools an error's text points at, as `tools[N]` (OpenAI) or `tools.N.` (Anthropic-style), in order. */
export function rejectedTools(text: string, tools: readonly OfferedTool[]): { index: number; tool: OfferedTool }[] {
  const indexes = [...text.matchAll(/\btools(?:\[(\d+)\]|\.(\d+)\.)/g)].map((match) => Number(match[1] ?? match[2]));
  return [...new Set(indexes)].flatMap((index) => {
    const tool = tools[index];
    return tool === undefined ? [] : [{ index, tool }];
  });
}

function describeTool(tool: OfferedTool): string {
  return `${tool.name}, the tool "${tool.originalName}" of the MCP server "${tool.server}"`;
}

function classify(
  status: number,
  code: string | undefined,
  message: string,
  setup: ProviderSetup,
): [FailureType, boolean, string] {
  if (status === 408) return [FailureType.ModelTimeout, true, ''];
  if (status === 409) return [FailureType.ModelConflict, true, ''];
  if (status === 429) {
    if (code === 'insufficient_quota') {
      return [FailureType.ModelQuotaExceeded, false, 'The account is out of quota: check billing, then send again.'];
    }
    return [FailureType.ModelRateLimited, true, ''];
  }
  if (status >= 500) return [FailureType.ModelServerError, true, ''];
  if (status === 401) return [FailureType.ModelAuthentication, false, `Check ${setup.keyVariable}.`];
  if (status === 403) return [FailureType.ModelPermissionDenied, false, 'The API key may not use this model.'];
  if (status === 404)
    return [
      FailureType.ModelNotFound,
      false,
      `Check the model name (DURABLE_AGENT_MODEL or the conversation's model) and ${setup.baseUrlVariable}.`,
    ];
  if (
    code === 'context_length_exceeded' ||
    /context length|context window|maximum context|prompt is too long/i.test(message)
  ) {
    return [
      FailureType.ModelContextLengthExceeded,
      false,
      'The conversation is too long for the model, even after compaction: its newest turn alone may pass the ' +
        "window. Set settings.contextWindow to the model's window, or settings.maxInputTokens below it.",
    ];
  }
  if (code === 'content_filter' || code === 'content_policy_violation') {
    return [FailureType.ModelContentFiltered, false, 'The request was blocked by the content filter.'];
  }
  return [FailureType.ModelBadRequest, false, 'The request was rejected; it will not succeed if repeated.'];
}

/** `retry-after-ms` (milliseconds), else `retry-after` (seconds or an HTTP date). */
export function retryDelayMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const milliseconds = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  // Only an HTTP date (e.g. `Wed, 21 Oct 2026 07:28:00 GMT`): Date.parse would also accept text like "soon 1".
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(value.trim())) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function failure(
  type: FailureType,
  message: string,
  retryable: boolean,
  nextRetryDelayMs?: number,
  details?: Record<string, unknown>,
): ApplicationFailure {
  return expectedFailure({
    type,
    message,
    nonRetryable: !retryable,
    ...(retryable && nextRetryDelayMs !== undefined ? { nextRetryDelay: nextRetryDelayMs } : {}),
    ...(details ? { details: [details] } : {}),
  });
}
