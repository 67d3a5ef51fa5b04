import { ApplicationFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type {
  FunctionTool,
  Response,
  ResponseCreateParams,
  ResponseCreateParamsNonStreaming,
  ResponseInputItem,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import { FailureType } from '../../../../shared/errors.js';
import { fromLatestProviderCompaction } from '../../../../shared/provider-compaction.js';
import type {
  AssistantMessage,
  ChatMessage,
  ProviderCompaction,
  ProviderCompactionRequest,
  ReasoningItem,
  ToolCall,
} from '../../../../shared/types.js';
import { CHAT_COMPLETIONS_TOOL_LIMITS } from '../tool-limits.js';
import { openAIUsage } from './chat-completions.js';
import {
  defineProvider,
  ProviderName,
  type CreateMethod,
  type ModelProvider,
  type ProviderAnswer,
} from './provider.js';

/** What the Responses provider needs of the `openai` client. */
export interface ResponsesClient {
  responses: CreateMethod<ResponseCreateParams, Response | AsyncIterable<ResponseStreamEvent>>;
  baseURL?: string;
}

/**
 * OpenAI's Responses API through `openai`. Nothing is stored at OpenAI (`store: false`): the transcript is sent whole,
 * and the encrypted reasoning of earlier rounds goes with it, or the model would reason from scratch every round.
 */
export function openAIResponsesProvider(client: ResponsesClient | OpenAI): ModelProvider {
  const description = {
    name: ProviderName.OpenAIResponses,
    client,
    defaultEndpoint: 'the OpenAI API',
    toolLimits: CHAT_COMPLETIONS_TOOL_LIMITS,
    nativeCompaction: 'openai_compaction' as const,
  };
  return defineProvider(description, async (request) => {
    // The latest compaction item stands for everything before it: what came before is not sent again.
    const input = toResponsesInput(fromLatestProviderCompaction(request.messages, 'openai_compaction'));
    if (request.instruction) input.push({ role: 'system', content: request.instruction });
    const tools: FunctionTool[] = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      strict: false,
    }));
    const body: ResponseCreateParamsNonStreaming = {
      model: request.model,
      input,
      store: false,
      include: ['reasoning.encrypted_content'],
      ...(tools.length > 0 ? { tools, tool_choice: request.toolChoice } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.maxCompletionTokens !== undefined ? { max_output_tokens: request.maxCompletionTokens } : {}),
      ...(request.responseFormat ? { text: { format: { type: 'json_schema', ...request.responseFormat } } } : {}),
      ...(request.providerCompaction
        ? { context_management: [{ type: 'compaction', ...compactThreshold(request.providerCompaction) }] }
        : {}),
    };
    const options = { headers: { 'Idempotency-Key': request.idempotencyKey }, signal: request.signal };
    const { onText } = request;
    let response: Response;
    if (onText === undefined) {
      response = (await client.responses.create(body, options)) as Response;
    } else {
      const answer = await client.responses.create({ ...body, stream: true }, options);
      response = Symbol.asyncIterator in answer ? await finalResponse(answer, onText) : answer;
    }
    return fromResponse(response, request.toolChoice === 'none');
  });
}

function compactThreshold(compaction: ProviderCompactionRequest): { compact_threshold?: number } {
  return compaction.threshold === undefined ? {} : { compact_threshold: compaction.threshold };
}

/** The response the stream's last event carries; `onText` gets each piece of output text as it arrives. */
async function finalResponse(
  events: AsyncIterable<ResponseStreamEvent>,
  onText: (text: string) => void,
): Promise<Response> {
  for await (const event of events) {
    if (event.type === 'response.output_text.delta' && event.delta !== '') onText(event.delta);
    if (event.type === 'response.completed' || event.type === 'response.incomplete') return event.response;
    if (event.type === 'response.failed' || event.type === 'error') {
      const message = event.type === 'error' ? event.message : (event.response.error?.message ?? 'no reason given');
      throw ApplicationFailure.create({
        type: FailureType.ModelServerError,
        message: `The response failed: ${message}`,
      });
    }
  }
  // A stream that ended before its last event was cut short: retry it like a dropped connection.
  throw ApplicationFailure.create({
    type: FailureType.ModelInvalidResponse,
    message: "The model's stream ended before response.completed.",
  });
}

/**
 * The transcript as Responses input items: messages by role; the assistant's reasoning items (encrypted, from this
 * provider only), its text and its `function_call` items; each tool message as a `function_call_output`.
 */
export function toResponsesInput(transcript: readonly ChatMessage[]): ResponseInputItem[] {
  return transcript.flatMap((message): ResponseInputItem[] => {
    switch (message.role) {
      case 'system':
      case 'user':
        return [{ role: message.role, content: message.content }];
      case 'tool':
        return [{ type: 'function_call_output', call_id: message.toolCallId, output: message.content }];
      case 'assistant':
        return [
          ...(message.providerCompaction?.type === 'openai_compaction'
            ? [
                {
                  type: 'compaction' as const,
                  id: message.providerCompaction.id,
                  encrypted_content: message.providerCompaction.encryptedContent,
                },
              ]
            : []),
          ...(message.reasoning ?? []).flatMap((item): ResponseInputItem[] =>
            item.type === 'openai_reasoning'
              ? [
                  {
                    type: 'reasoning',
                    id: item.id,
                    encrypted_content: item.encryptedContent,
                    summary: item.summary.map((text) => ({ type: 'summary_text' as const, text })),
                  },
                ]
              : [],
          ),
          ...(message.content ? [{ role: 'assistant' as const, content: message.content }] : []),
          ...(message.toolCalls ?? []).map((call) => ({
            type: 'function_call' as const,
            call_id: call.id,
            name: call.name,
            arguments: call.arguments,
          })),
        ];
    }
  });
}

/** The response as the transcript's assistant message; with `toolsDisabled` its function calls are dropped. */
export function fromResponse(response: Response, toolsDisabled: boolean): ProviderAnswer {
  if (response.incomplete_details?.reason === 'content_filter') {
    throw ApplicationFailure.create({
      type: FailureType.ModelContentFiltered,
      nonRetryable: true,
      message: `The answer was blocked by the content filter (response ${response.id}).`,
    });
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningItem[] = [];
  let providerCompaction: ProviderCompaction | undefined;
  for (const item of response.output) {
    if (item.type === 'message') {
      for (const part of item.content) if (part.type === 'output_text') text += part.text;
    } else if (item.type === 'function_call' && !toolsDisabled) {
      toolCalls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
    } else if (item.type === 'reasoning' && item.encrypted_content) {
      reasoning.push({
        type: 'openai_reasoning',
        id: item.id,
        encryptedContent: item.encrypted_content,
        summary: item.summary.map((part) => part.text),
      });
    } else if (item.type === 'compaction') {
      providerCompaction = { type: 'openai_compaction', id: item.id, encryptedContent: item.encrypted_content };
    }
  }
  const message: AssistantMessage = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(reasoning.length > 0 ? { reasoning } : {}),
    ...(providerCompaction ? { providerCompaction } : {}),
  };
  const finishReason =
    toolCalls.length > 0
      ? 'tool_calls'
      : response.incomplete_details?.reason === 'max_output_tokens'
        ? 'length'
        : 'stop';
  const { usage } = response;
  const tokens = openAIUsage(
    usage?.input_tokens,
    usage?.output_tokens,
    usage?.total_tokens,
    usage?.input_tokens_details?.cached_tokens,
    usage?.output_tokens_details?.reasoning_tokens,
  );
  return {
    message,
    usage: tokens,
    finishReason,
    model: response.model,
    // The API says nothing of what the compaction removed: only that it happened.
    ...(providerCompaction ? { contextEdits: [{ type: 'compaction' }] } : {}),
  };
}
