import { CONVERSATION_LABEL, EARLIER_SUMMARY_LABEL } from '../../shared/compaction.js';
import type { JsonValue } from '../../shared/types.js';
import type { ModelApi } from './model-api.js';
import type { RecordedRequest } from './recorded-request.js';

/**
 * The scripted model's context window and its answers to summary requests (docs/scripted-model.md#context-window):
 * what a test of compaction needs from a model (docs/models.md#compaction).
 */

/** How the scripted model answers compaction's summary requests: a built-in summarizer, or a function of the request. */
export type SummaryAnswer = 'user-lines' | ((request: RecordedRequest) => string);

/** A summary request carries this at the end of its idempotency key (`…/round-<r>/compaction-<n>`). */
const SUMMARY_KEY = /\/compaction-\d+$/;

export function isSummaryRequest(idempotencyKey: string | null): boolean {
  return idempotencyKey !== null && SUMMARY_KEY.test(idempotencyKey);
}

/**
 * The error body a real server of `api` sends for an input over its window, with the status 400: OpenAI's Chat
 * Completions names both counts, Anthropic's Messages API both too in its own words, the Responses API neither.
 */
export function contextRefusal(api: ModelApi, requested: number, limit: number): JsonValue {
  switch (api) {
    case 'chat-completions':
      return {
        error: {
          message:
            `This model's maximum context length is ${limit} tokens. However, your messages resulted in ` +
            `${requested} tokens. Please reduce the length of the messages.`,
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      };
    case 'messages':
      return {
        type: 'error',
        error: { type: 'invalid_request_error', message: `prompt is too long: ${requested} tokens > ${limit} maximum` },
      };
    case 'responses':
      return {
        error: {
          message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
          type: 'invalid_request_error',
          param: 'input',
          code: 'context_length_exceeded',
        },
      };
  }
}

/** Every string in a request body, in order (message contents of every API's shape). */
function stringsOf(value: unknown, into: string[] = []): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, into);
  else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) stringsOf(item, into);
  return into;
}

/**
 * The built-in summarizer, `user-lines`: the lines of the earlier summary, then the first sentence of each user
 * message of the part to summarize as a line `- <sentence>`. It forgets what the assistant and the tools said.
 */
export function userLinesSummary(request: RecordedRequest): string {
  const text = stringsOf(request.body).find((value) => value.includes(CONVERSATION_LABEL)) ?? '';
  const lines: string[] = [];
  let inEarlier = false;
  for (const line of text.split('\n')) {
    if (line === EARLIER_SUMMARY_LABEL) inEarlier = true;
    else if (line === CONVERSATION_LABEL || line === '') inEarlier = false;
    else if (inEarlier) lines.push(line);
    else if (line.startsWith('[user] ')) lines.push(`- ${firstSentence(line.slice('[user] '.length))}`);
  }
  return lines.join('\n');
}

/** Up to the first `.`, `!` or `?` that ends a sentence, at most 300 characters. */
function firstSentence(text: string): string {
  const end = /[.!?](?:\s|$)/.exec(text);
  return (end === null ? text : text.slice(0, end.index + 1)).slice(0, 300);
}

/** What the scripted model answers before its script: a refusal over the window, or a summary. */
export type EarlyAnswer = { refusal: JsonValue } | { summary: string } | undefined;

/** The early answer to `request` (its body `length` characters long), if `options` ask for one. */
export function earlyAnswer(
  options: { contextWindow?: number; summaries?: SummaryAnswer },
  request: RecordedRequest,
  length: number,
): EarlyAnswer {
  // The same estimate as the usage the scripted model reports: a token per 4 characters of the request body.
  const requested = Math.ceil(length / 4);
  if (options.contextWindow !== undefined && requested > options.contextWindow) {
    return { refusal: contextRefusal(request.api, requested, options.contextWindow) };
  }
  if (options.summaries !== undefined && isSummaryRequest(request.idempotencyKey)) {
    const summarize = options.summaries === 'user-lines' ? userLinesSummary : options.summaries;
    return { summary: summarize(request) };
  }
  return undefined;
}
