import type { ManagedContext } from './context-management.js';
import { createHash } from 'node:crypto';
import type OpenAI from 'openai';
import type { JsonValue } from '../../shared/types.js';
import type { ContentStep, FinishReason, ToolCallsStep } from './script.js';
import { estimatedTokens, scriptedTokens, type StepTokens } from './usage.js';

/** A step that answers with a completion rather than an error. */
export type CompletionStep = ContentStep | ToolCallsStep;

/** What a response depends on besides its step; equal contexts give byte-identical responses. */
export interface ResponseContext {
  conversation: string;
  stepIndex: number;
  /** Echoed from the request. */
  model: string;
  /** Unix seconds; the server's start time, so that a repeated request gets an identical response. */
  created: number;
  /** Length of the request body, the basis of the estimated `prompt_tokens`. */
  requestLength: number;
  /** The request's provider-native compaction, when it asked for it (./context-management.ts). */
  managed?: ManagedContext;
}

/** Tool-call arguments are streamed in pieces of this many characters, as real models stream them. */
export const ARGUMENT_PIECE_LENGTH = 8;

/** The usage estimate: one token per this many characters, rounded up. */
export const CHARACTERS_PER_TOKEN = 4;

/** Codes of the errors the scripted model raises itself (rather than ones a script asks for). */
export const ScriptedModelErrorCode = {
  /** The conversation asked for a step after the last one. */
  ScriptExhausted: 'script_exhausted',
  /** A step function threw or returned something that is not a step. */
  StepFailed: 'step_failed',
  /** The request is not a chat completion request. */
  InvalidRequest: 'invalid_request',
  /** No such endpoint. */
  NotFound: 'not_found',
} as const;

export type ScriptedModelErrorCode = (typeof ScriptedModelErrorCode)[keyof typeof ScriptedModelErrorCode];

export function digest(...parts: (string | number)[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24);
}

/** Ids are derived from the conversation and the step, so a retried request gets the same ids. */
export function completionId(conversation: string, stepIndex: number): string {
  return `chatcmpl-${digest('completion', conversation, stepIndex)}`;
}

export function toolCallId(conversation: string, stepIndex: number, callIndex: number): string {
  return `call_${digest('tool-call', conversation, stepIndex, callIndex)}`;
}

export function requestId(conversation: string, stepIndex: number): string {
  return `req_${digest('request', conversation, stepIndex)}`;
}

export function estimateTokens(characters: number): number {
  return Math.ceil(characters / CHARACTERS_PER_TOKEN);
}

export interface ToolCallText {
  id: string;
  name: string;
  arguments: string;
}

export function toolCallsOf(step: CompletionStep, context: ResponseContext): ToolCallText[] {
  return (step.toolCalls ?? []).map((call, callIndex) => ({
    id: toolCallId(context.conversation, context.stepIndex, callIndex),
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
  }));
}

export function finishReasonOf(step: CompletionStep): FinishReason {
  return step.finishReason ?? (step.toolCalls?.length ? 'tool_calls' : 'stop');
}

/** The step's token counts: as scripted, or estimated from the request's and the answer's length. */
export function scriptedUsage(step: CompletionStep, toolCalls: ToolCallText[], context: ResponseContext): StepTokens {
  if (step.usage) return scriptedTokens(step.usage);
  const completionLength = toolCalls.reduce(
    (length, call) => length + call.name.length + call.arguments.length,
    (step.content?.length ?? 0) + (step.reasoning?.length ?? 0),
  );
  return estimatedTokens(estimateTokens(context.requestLength), estimateTokens(completionLength));
}

/** Chat Completions has no count of cache writes: they are within `prompt_tokens`, as OpenAI bills no write. */
function usageOf(step: CompletionStep, toolCalls: ToolCallText[], context: ResponseContext): OpenAI.CompletionUsage {
  const tokens = scriptedUsage(step, toolCalls, context);
  return {
    prompt_tokens: tokens.input,
    completion_tokens: tokens.output,
    total_tokens: tokens.total,
    ...(tokens.cacheRead !== undefined ? { prompt_tokens_details: { cached_tokens: tokens.cacheRead } } : {}),
    ...(tokens.reasoning !== undefined ? { completion_tokens_details: { reasoning_tokens: tokens.reasoning } } : {}),
  };
}

/** The body of a non-streaming answer. */
export function completion(step: CompletionStep, context: ResponseContext): OpenAI.Chat.ChatCompletion {
  const toolCalls = toolCallsOf(step, context);
  const message: OpenAI.Chat.ChatCompletionMessage = {
    role: 'assistant',
    content: step.content ?? null,
    refusal: null,
  };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return {
    id: completionId(context.conversation, context.stepIndex),
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(step) }],
    usage: usageOf(step, toolCalls, context),
  };
}

/** Split text into words with their following whitespace, so that joining the pieces gives the text back. */
export function splitContent(content: string): string[] {
  return content.match(/\s*\S+\s*/g) ?? (content === '' ? [] : [content]);
}

export function splitArguments(text: string): string[] {
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += ARGUMENT_PIECE_LENGTH) {
    pieces.push(text.slice(start, start + ARGUMENT_PIECE_LENGTH));
  }
  return pieces;
}

/**
 * The chunks of a streaming answer, in the order a real model sends them: the role, the content a word at a
 * time, each tool call's id and name then its arguments in pieces, the finish reason, and the usage when asked.
 */
export function completionChunks(
  step: CompletionStep,
  context: ResponseContext,
  includeUsage: boolean,
): OpenAI.Chat.ChatCompletionChunk[] {
  const id = completionId(context.conversation, context.stepIndex);
  const chunk = (
    delta: OpenAI.Chat.ChatCompletionChunk.Choice.Delta,
    finishReason: FinishReason | null = null,
  ): OpenAI.Chat.ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created: context.created,
    model: context.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage && { usage: null }),
  });

  const toolCalls = toolCallsOf(step, context);
  const chunks = [chunk({ role: 'assistant', content: step.content === undefined ? null : '' })];
  for (const piece of splitContent(step.content ?? '')) chunks.push(chunk({ content: piece }));
  toolCalls.forEach((call, index) => {
    chunks.push(
      chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    for (const piece of splitArguments(call.arguments)) {
      chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  chunks.push(chunk({}, finishReasonOf(step)));
  if (includeUsage) {
    chunks.push({
      id,
      object: 'chat.completion.chunk',
      created: context.created,
      model: context.model,
      choices: [],
      usage: usageOf(step, toolCalls, context),
    });
  }
  return chunks;
}

const ERROR_TYPES: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  409: { type: 'invalid_request_error', code: 'conflict' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
};

/** An OpenAI-style error body, the one the `openai` client turns into its `APIError` classes. */
export function errorBody(message: string, type: string, code: string | null): { error: JsonValue } {
  return { error: { message, type, param: null, code } };
}

/** The default body of a scripted error: what a real OpenAI server says for that status. */
export function scriptedErrorBody(status: number, stepIndex: number, scriptName: string): { error: JsonValue } {
  const { type, code } = ERROR_TYPES[status] ?? {
    type: status >= 500 ? 'server_error' : 'invalid_request_error',
    code: null,
  };
  return errorBody(`Scripted error ${status} from step ${stepIndex} of ${scriptName}.`, type, code);
}
