import { Context } from '@temporalio/activity';
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
import { trimToContext } from '../../shared/context.js';
import { FailureType } from '../../shared/errors.js';
import type {
  AssistantMessage,
  ChatMessage,
  ModelCallInput,
  ModelCallResult,
  TokenUsage,
  ToolDefinition,
} from '../../shared/types.js';
import { streamSignal } from '../../workflows/definitions.js';
import { DEFAULT_MODEL_ATTEMPTS, errorAttemptsAllowed } from '../../workflows/attempts.js';
import type { ModelStreamOptions } from '../../workflows/stream-events.js';
import type { ToolListing } from '../../mcp/pool.js';
import type { Redactor } from '../../shared/redaction.js';
import { countingFailedAttempts } from '../calls/attempts.js';
import { AttemptHeartbeat } from '../calls/heartbeat.js';
import { toModelFailure } from './errors.js';
import { redactModelAnswer } from '../calls/outbound.js';
import { checkModelResult, fitModelAnswer, fitToolListOnce } from '../calls/payload-limits.js';
import { TextPublisher, type StreamPublisher } from './text-publisher.js';
import { ToolOffers } from './tool-limits.js';
import type { TranscriptCache } from './transcript-cache.js';

/**
 * The one method of the OpenAI client the model activity needs; tests pass a real client or a stub of this. With
 * `stream: true` in the body it answers with the chunks (an async iterable); a stub that answers with the whole
 * completion instead still works, without live text.
 */
export interface ChatCompletionsClient {
  chat: {
    completions: {
      create(
        body: ChatCompletionCreateParams,
        options?: { headers?: Record<string, string>; signal?: AbortSignal },
      ): PromiseLike<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
    };
  };
  baseURL?: string;
}

export interface ModelActivityDependencies {
  openai: ChatCompletionsClient | OpenAI;
  transcripts: TranscriptCache;
  /**
   * Lists the tools of every MCP server, for a call with `listTools` (the turn's first), and the servers left out
   * because they could not be listed. Default: no tools.
   */
  listTools?: () => Promise<ToolListing>;
  /** Model used when the conversation names none. */
  defaultModel: string;
  /** Delivers streamed text to the workflow; default: signals through the activity context's Temporal client. */
  publish?: StreamPublisher;
  /** Least time between two text batches of one model call, after the first (sent at once). Default 250 ms. */
  streamIntervalMs?: number;
  /**
   * The worker's secrets (src/shared/redaction.ts): redacted from the tools listed, the streamed text and the answer
   * the worker caches, so they match what history records. Default: none (the caller redacts the result).
   */
  secrets?: Redactor;
}

/** The idempotency key of a model call: the scripted model server and providers use it to recognise a retry. */
export function idempotencyKey(input: Pick<ModelCallInput, 'workflowId' | 'runId' | 'turn' | 'round'>): string {
  return `${input.workflowId}/${input.runId}/turn-${input.turn}/round-${input.round}`;
}

export function createModelActivities(dependencies: ModelActivityDependencies) {
  const { openai, transcripts, defaultModel, secrets } = dependencies;
  const fitToolList = fitToolListOnce();
  const listTools = dependencies.listTools ?? (async (): Promise<ToolListing> => ({ tools: [], unavailable: [] }));
  const endpoint = (openai as { baseURL?: string }).baseURL ?? 'the model endpoint';
  const toolOffers = new ToolOffers();

  const oneAttempt = {
    async callModel(input: ModelCallInput & ModelStreamOptions): Promise<ModelCallResult> {
      const context = Context.current();
      const [resolved, listed] = await Promise.all([
        transcripts.resolve(input),
        // The list is recorded in this call's result: cut to what a Temporal payload may carry before it is offered.
        input.listTools
          ? listTools().then((listing) => ({
              ...listing,
              tools: fitToolList(secrets?.value(listing.tools) ?? listing.tools, context.log),
            }))
          : undefined,
      ]);
      const { messages } = resolved;
      let { tools } = resolved;
      if (listed !== undefined) {
        tools = listed.tools;
        transcripts.rememberTools(input, listed.tools);
      }
      const trimmed = trimToContext(messages, input.maxInputTokens);
      const wire = trimmed.messages.map(toOpenAIMessage);
      if (input.instruction) wire.push({ role: 'system', content: input.instruction });
      const model = input.model ?? defaultModel;
      // Fitted to the API's limits for the request only: the turn records the servers' own definitions.
      const offered = toolOffers.offer(tools, context.log);
      const body: ChatCompletionCreateParamsNonStreaming = {
        model,
        messages: wire,
        ...(offered.length > 0 ? { tools: offered.map(toOpenAITool), tool_choice: input.toolChoice } : {}),
        ...(input.temperature !== undefined ? { temperature: input.temperature } : {}),
        ...(input.maxCompletionTokens !== undefined ? { max_completion_tokens: input.maxCompletionTokens } : {}),
        ...(input.responseFormat
          ? { response_format: { type: 'json_schema', json_schema: input.responseFormat } }
          : {}),
      };
      const publisher = input.stream
        ? new TextPublisher({
            publish: dependencies.publish ?? contextPublisher(context),
            target: { workflowId: input.workflowId, runId: input.runId },
            batch: { turn: input.turn, round: input.round, attempt: context.info.attempt },
            intervalMs: dependencies.streamIntervalMs,
            log: context.log,
            redactor: secrets,
          })
        : undefined;

      // A request sent for an attempt Temporal has timed out (its heartbeats did not get through while the transcript was
      // rebuilt, e.g. in an outage) is paid for and never used: the retry sends its own.
      await AttemptHeartbeat.of(context).confirmRunning();
      let completion: ChatCompletion;
      try {
        const options = {
          // The openai client accepts an `idempotencyKey` option but sends no header for it: send it ourselves.
          headers: { 'Idempotency-Key': idempotencyKey(input) },
          signal: context.cancellationSignal,
        };
        if (publisher) {
          // A retry tells subscribers at once that the text they have for this round is to be replaced.
          if (context.info.attempt > 1) publisher.announce();
          const response = await openai.chat.completions.create(
            { ...body, stream: true, stream_options: { include_usage: true } },
            options,
          );
          completion = isChunkStream(response)
            ? await assembleCompletion(response, (text) => publisher.add(text))
            : response;
          await publisher.close();
        } else {
          completion = (await openai.chat.completions.create(body, options)) as ChatCompletion;
        }
      } catch (error) {
        publisher?.abandon();
        // Cancelled (interrupt or the turn's time limit): report the cancellation itself, not the aborted request.
        if (context.cancellationSignal.aborted) throw (context.cancellationSignal.reason as unknown) ?? error;
        throw toModelFailure(error, endpoint, offered);
      }

      // Bounded like every activity result (src/shared/payload-limits.ts): an endpoint may send megabytes.
      const answer = fromOpenAICompletion(completion, input.toolChoice === 'none');
      const result = fitModelAnswer(secrets ? redactModelAnswer(secrets, answer) : answer, context.log);
      const full: ModelCallResult =
        listed === undefined
          ? result
          : {
              ...result,
              turnSetup: {
                tools: listed.tools,
                model: defaultModel,
                ...(listed.unavailable.length > 0 ? { unavailableServers: listed.unavailable } : {}),
              },
            };
      checkModelResult(full);
      transcripts.remember(input, result.message);
      return full;
    },
  };
  return {
    /** One model call; an attempt that fails with an error counts against `modelAttempts` (see ../calls/attempts.ts). */
    callModel: (input: ModelCallInput & ModelStreamOptions): Promise<ModelCallResult> =>
      countingFailedAttempts(errorAttemptsAllowed(input.modelAttempts, DEFAULT_MODEL_ATTEMPTS), () =>
        // From the attempt's first moment, not from its request: rebuilding the transcript (a query) and listing the
        // tools take time too, and an attempt that does not heartbeat meanwhile is timed out and run again.
        AttemptHeartbeat.of().during(oneAttempt.callModel(input)),
      ),
  };
}

/** Publishes through the Temporal client of the worker running this activity. */
function contextPublisher(context: Context): StreamPublisher {
  return ({ workflowId, runId }, batch) =>
    context.client.workflow.getHandle(workflowId, runId).signal(streamSignal, batch);
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
  const inputTokens = usage?.prompt_tokens ?? 0;
  const outputTokens = usage?.completion_tokens ?? 0;
  // Parts of the counts above, priced apart (src/pricing); absent when zero, so usage without them is as it was.
  const cacheReadTokens = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const reasoningTokens = usage?.completion_tokens_details?.reasoning_tokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: usage?.total_tokens ?? inputTokens + outputTokens,
    ...(cacheReadTokens > 0 ? { cacheReadTokens } : {}),
    ...(reasoningTokens > 0 ? { reasoningTokens } : {}),
  };
}
