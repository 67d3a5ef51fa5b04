import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { trimToContext } from '../shared/context.js';
import { FailureType } from '../shared/errors.js';
import type {
  AssistantMessage,
  ChatMessage,
  ModelCallInput,
  ModelCallResult,
  TokenUsage,
  ToolDefinition,
} from '../shared/types.js';
import { toModelFailure } from './model-errors.js';
import type { TranscriptCache } from './transcript-cache.js';

/** The one method of the OpenAI client the model activity needs; tests pass a real client or a stub of this. */
export interface ChatCompletionsClient {
  chat: {
    completions: {
      create(
        body: ChatCompletionCreateParamsNonStreaming,
        options?: { headers?: Record<string, string>; signal?: AbortSignal },
      ): PromiseLike<ChatCompletion>;
    };
  };
  baseURL?: string;
}

export interface ModelActivityDependencies {
  openai: ChatCompletionsClient | OpenAI;
  transcripts: TranscriptCache;
  /** Model used when the conversation names none. */
  defaultModel: string;
  /** How often to heartbeat while waiting for the model. Default 2 seconds. */
  heartbeatIntervalMs?: number;
}

/** The idempotency key of a model call: the scripted model server and providers use it to recognise a retry. */
export function idempotencyKey(input: Pick<ModelCallInput, 'workflowId' | 'runId' | 'turn' | 'round'>): string {
  return `${input.workflowId}/${input.runId}/turn-${input.turn}/round-${input.round}`;
}

export function createModelActivities(dependencies: ModelActivityDependencies) {
  const { openai, transcripts, defaultModel } = dependencies;
  const heartbeatIntervalMs = dependencies.heartbeatIntervalMs ?? 2_000;
  const endpoint = (openai as { baseURL?: string }).baseURL ?? 'the model endpoint';

  return {
    async callModel(input: ModelCallInput): Promise<ModelCallResult> {
      const context = Context.current();
      const { messages, tools } = await transcripts.resolve(input);
      const trimmed = trimToContext(messages, input.maxInputTokens);
      const wire = trimmed.messages.map(toOpenAIMessage);
      if (input.instruction) wire.push({ role: 'system', content: input.instruction });
      const model = input.model ?? defaultModel;
      const body: ChatCompletionCreateParamsNonStreaming = {
        model,
        messages: wire,
        ...(tools.length > 0 ? { tools: tools.map(toOpenAITool), tool_choice: input.toolChoice } : {}),
        ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
        ...(input.maxCompletionTokens !== undefined ? { max_completion_tokens: input.maxCompletionTokens } : {}),
      };

      const heartbeat = setInterval(() => context.heartbeat(), heartbeatIntervalMs);
      let completion: ChatCompletion;
      try {
        context.heartbeat();
        completion = await openai.chat.completions.create(body, {
          // The openai client accepts an `idempotencyKey` option but sends no header for it: send it ourselves.
          headers: { 'Idempotency-Key': idempotencyKey(input) },
          signal: context.cancellationSignal,
        });
      } catch (error) {
        // Cancelled (interrupt or the turn's time limit): report the cancellation itself, not the aborted request.
        if (context.cancellationSignal.aborted) throw (context.cancellationSignal.reason as unknown) ?? error;
        throw toModelFailure(error, endpoint);
      } finally {
        clearInterval(heartbeat);
      }

      const result = fromOpenAICompletion(completion, input.toolChoice === 'none');
      transcripts.remember(input, result.message);
      return result;
    },
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
  const inputTokens = usage?.prompt_tokens ?? 0;
  const outputTokens = usage?.completion_tokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: usage?.total_tokens ?? inputTokens + outputTokens };
}
