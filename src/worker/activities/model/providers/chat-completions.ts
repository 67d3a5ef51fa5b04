import { ApplicationFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParams,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { FailureType } from '../../../../shared/errors.js';
import type {
  AssistantMessage,
  ChatMessage,
  ModelCallResult,
  TokenUsage,
  ToolDefinition,
} from '../../../../shared/types.js';
import { CHAT_COMPLETIONS_TOOL_LIMITS } from '../tool-limits.js';
import {
  defineProvider,
  ProviderName,
  type CreateMethod,
  type ModelProvider,
  type ProviderRequest,
} from './provider.js';

/**
 * The one method of the OpenAI client the model activity needs; tests pass a real client or a stub of this. With
 * `stream: true` in the body it answers with the chunks (an async iterable); a stub that answers with the whole
 * completion instead still works, without live text.
 */
export interface ChatCompletionsClient {
  chat: { completions: CreateMethod<ChatCompletionCreateParams, ChatCompletion | AsyncIterable<ChatCompletionChunk>> };
  baseURL?: string;
}

/** OpenAI's Chat Completions API, and any server that speaks it: the default provider. */
export function chatCompletionsProvider(client: ChatCompletionsClient | OpenAI): ModelProvider {
  const description = {
    name: ProviderName.ChatCompletions,
    client,
    defaultEndpoint: 'the model endpoint',
    toolLimits: CHAT_COMPLETIONS_TOOL_LIMITS,
  };
  return defineProvider(description, async (request: ProviderRequest) => {
    const wire = request.messages.map(toOpenAIMessage);
    if (request.instruction) wire.push({ role: 'system', content: request.instruction });
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: request.model,
      messages: wire,
      ...(request.tools.length > 0 ? { tools: request.tools.map(toOpenAITool), tool_choice: request.toolChoice } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxCompletionTokens !== undefined ? { max_completion_tokens: request.maxCompletionTokens } : {}),
      ...(request.responseFormat
        ? { response_format: { type: 'json_schema', json_schema: request.responseFormat } }
        : {}),
    };
    const options = {
      // The openai client accepts an `idempotencyKey` option but sends no header for it: send it ourselves.
      headers: { 'Idempotency-Key': request.idempotencyKey },
      signal: request.signal,
    };
    let completion: ChatCompletion;
    const { onText } = request;
    if (onText) {
      const response = await client.chat.completions.create(
        { ...body, stream: true, stream_options: { include_usage: true } },
        options,
      );
      completion = isChunkStream(response) ? await assembleCompletion(response, onText) : response;
    } else {
      completion = (await client.chat.completions.create(body, options)) as ChatCompletion;
    }
    return fromOpenAICompletion(completion, request.toolChoice === 'none');
  });
}

function isChunkStream(
  response: ChatCompletion | AsyncIterable<ChatCompletionChunk>,
): response is AsyncIterable<ChatCompletionChunk> {
  return typeof (response as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator] === 'function';
}

/**
 * Assemble streamed chunks into the completion the same request would have got without streaming, so the transcript
 * is identical either way; `onText` gets each piece of content as it arrives.
 */
export async function assembleCompletion(
  chunks: AsyncIterable<ChatCompletionChunk>,
  onText: (text: string) => void,
): Promise<ChatCompletion> {
  let id = '';
  let created = 0;
  let model = '';
  let content: string | null = null;
  let finishReason: ChatCompletion.Choice['finish_reason'] | null = null;
  let usage: ChatCompletion['usage'];
  let sawChoice = false;
  const toolCalls: { id: string; name: string; arguments: string }[] = [];
  for await (const chunk of chunks) {
    id ||= chunk.id;
    created ||= chunk.created;
    model ||= chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices.find((entry) => entry.index === 0);
    if (!choice) continue;
    sawChoice = true;
    const { delta } = choice;
    if (typeof delta.content === 'string') {
      content = (content ?? '') + delta.content;
      if (delta.content !== '') onText(delta.content);
    }
    for (const call of delta.tool_calls ?? []) {
      const entry = (toolCalls[call.index] ??= { id: '', name: '', arguments: '' });
      if (call.id) entry.id = call.id;
      if (call.function?.name) entry.name += call.function.name;
      if (call.function?.arguments) entry.arguments += call.function.arguments;
    }
    if (choice.finish_reason) finishReason = choice.finish_reason;
  }
  if (!sawChoice || finishReason === null) {
    // A stream that ended without a finish reason was cut short: retry it like a dropped connection.
    throw ApplicationFailure.create({
      type: FailureType.ModelInvalidResponse,
      message: `The model's stream ended before its finish reason${id ? ` (completion ${id})` : ''}.`,
    });
  }
  const calls = toolCalls.filter((call) => call !== undefined);
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          refusal: null,
          ...(calls.length > 0
            ? {
                tool_calls: calls.map((call) => ({
                  id: call.id,
                  type: 'function' as const,
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

export function toOpenAITool(tool: ToolDefinition): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.inputSchema },
  };
}

export function toOpenAIMessage(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: message.content,
        ...(message.toolCalls && message.toolCalls.length > 0
          ? {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
  }
}

/**
 * Convert the completion to the transcript's assistant message. With `toolsDisabled` (the final-answer call) any
 * tool calls the model still made are dropped, since they would never get results.
 */
export function fromOpenAICompletion(completion: ChatCompletion, toolsDisabled: boolean): ModelCallResult {
  const choice = completion.choices[0];
  if (choice === undefined) {
    throw ApplicationFailure.create({
      type: FailureType.ModelInvalidResponse,
      message: `The model returned no choices (completion ${completion.id}).`,
    });
  }
  if (choice.finish_reason === 'content_filter') {
    throw ApplicationFailure.create({
      type: FailureType.ModelContentFiltered,
      nonRetryable: true,
      message: 'The answer was blocked by the content filter.',
    });
  }
  const toolCalls = toolsDisabled
    ? []
    : (choice.message.tool_calls ?? []).flatMap((call) =>
        call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }] : [],
      );
  const message: AssistantMessage = {
    role: 'assistant',
    content: choice.message.content ?? (toolCalls.length > 0 ? null : ''),
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
  };
  return {
    message,
    usage: fromOpenAIUsage(completion.usage),
    finishReason: choice.finish_reason,
    model: completion.model,
  };
}

function fromOpenAIUsage(usage: ChatCompletion['usage']): TokenUsage {
  return openAIUsage(
    usage?.prompt_tokens,
    usage?.completion_tokens,
    usage?.total_tokens,
    usage?.prompt_tokens_details?.cached_tokens,
    usage?.completion_tokens_details?.reasoning_tokens,
  );
}

/**
 * OpenAI's counts (both APIs) as the transcript's: cached tokens are already within the input tokens and reasoning
 * tokens within the output tokens. OpenAI reports no cache writes (it bills none).
 */
export function openAIUsage(
  input: number | undefined,
  output: number | undefined,
  total: number | undefined,
  cached: number | undefined,
  reasoning: number | undefined,
): TokenUsage {
  const inputTokens = input ?? 0;
  const outputTokens = output ?? 0;
  // Parts of the counts above, priced apart (src/worker/pricing); absent when zero, so usage without them is as it was.
  const cacheReadTokens = cached ?? 0;
  const reasoningTokens = reasoning ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: total ?? inputTokens + outputTokens,
    ...(cacheReadTokens > 0 ? { cacheReadTokens } : {}),
    ...(reasoningTokens > 0 ? { reasoningTokens } : {}),
  };
}
