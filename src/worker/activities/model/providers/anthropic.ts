import type Anthropic from '@anthropic-ai/sdk';
import type {
  BetaContextManagementResponse,
  BetaMessage,
  MessageCreateParams as BetaMessageCreateParams,
  BetaRawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type {
  ContentBlock,
  ContentBlockParam,
  Message,
  MessageCreateParams,
  MessageCreateParamsNonStreaming,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../../../shared/errors.js';
import { fromLatestProviderCompaction } from '../../../../shared/provider-compaction.js';
import type {
  AssistantMessage,
  ChatMessage,
  ProviderCompaction,
  ReasoningItem,
  TokenUsage,
  ToolCall,
} from '../../../../shared/types.js';
import type { ProviderSetup } from '../errors.js';
import { ANTHROPIC_TOOL_LIMITS } from '../tool-limits.js';
import {
  ANTHROPIC_CONTEXT_BETAS,
  appliedEdits,
  contextManagement,
  fromCompactionBlock,
  toCompactionBlock,
  type CompactionBlock,
} from './anthropic-context.js';
import { assembleAnthropicMessage } from './anthropic-stream.js';
import {
  ProviderName,
  defineProvider,
  type CreateMethod,
  type ModelProvider,
  type ProviderAnswer,
  type ProviderRequest,
  type SdkRequestOptions,
} from './provider.js';

/** What the Anthropic provider needs of `@anthropic-ai/sdk`'s client. */
export interface AnthropicMessagesClient {
  messages: CreateMethod<MessageCreateParams, Message | AsyncIterable<RawMessageStreamEvent>>;
  /** The beta Messages API: context editing and compaction (`settings.compaction: "provider"`) need it. */
  beta?: { messages: CreateMethod<BetaMessageCreateParams, BetaMessage | AsyncIterable<BetaRawMessageStreamEvent>> };
  baseURL?: string;
}

/** `max_tokens` is required by the Messages API: this when the conversation sets no `maxCompletionTokens`. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8_192;
/** The least thinking budget the API accepts; a call left with less (by the token budget) does not think. */
export const MIN_THINKING_BUDGET_TOKENS = 1_024;
/** How often a `pause_turn` answer is continued within one model call before its text is taken as it is. */
export const MAX_PAUSE_CONTINUATIONS = 3;

const ANTHROPIC_SETUP: ProviderSetup = { keyVariable: 'ANTHROPIC_API_KEY', baseUrlVariable: 'ANTHROPIC_BASE_URL' };
/** Prompt caching: these breakpoints mark the prefix that the next call of the turn repeats. */
const CACHE_BREAKPOINT = { type: 'ephemeral' } as const;

/** Anthropic's Messages API through `@anthropic-ai/sdk`. */
export function anthropicProvider(client: AnthropicMessagesClient | Anthropic): ModelProvider {
  const description = {
    name: ProviderName.Anthropic,
    client,
    defaultEndpoint: 'the Anthropic API',
    toolLimits: ANTHROPIC_TOOL_LIMITS,
    setup: ANTHROPIC_SETUP,
    nativeCompaction: 'anthropic_compaction' as const,
  };
  return defineProvider(description, async (request) => {
    const body = toAnthropicRequest(request);
    const options = { headers: { 'Idempotency-Key': request.idempotencyKey }, signal: request.signal };
    let answer: ProviderAnswer | undefined;
    // A paused turn (a long server-side step) is continued by sending the answer so far back as it is.
    for (let continuation = 0; ; continuation++) {
      const { message, toolInputs } = await send(client, body, options, request);
      const part = fromAnthropicMessage(message, toolInputs, request.toolChoice === 'none');
      answer = answer === undefined ? part : joinAnswers(answer, part);
      if (message.stop_reason !== 'pause_turn' || continuation >= MAX_PAUSE_CONTINUATIONS) return answer;
      body.messages = [...body.messages, { role: 'assistant', content: message.content }];
    }
  });
}

/**
 * One request: to the beta Messages API with its context editing when the conversation asks the provider to compact,
 * else to the Messages API. The beta answer's extra blocks and fields are read where the message is converted.
 */
async function send(
  client: AnthropicMessagesClient | Anthropic,
  body: MessageCreateParamsNonStreaming,
  options: SdkRequestOptions,
  { onText, providerCompaction }: Pick<ProviderRequest, 'onText' | 'providerCompaction'>,
): Promise<{ message: Message; toolInputs: Map<string, string> }> {
  const create: (body: object) => PromiseLike<Message | AsyncIterable<RawMessageStreamEvent>> = providerCompaction
    ? (beta) =>
        betaMessages(client).create(
          {
            ...(beta as BetaMessageCreateParams),
            betas: ANTHROPIC_CONTEXT_BETAS,
            context_management: contextManagement(providerCompaction),
          },
          options,
        ) as PromiseLike<Message | AsyncIterable<RawMessageStreamEvent>>
    : (plain) => client.messages.create(plain as MessageCreateParams, options);
  if (onText === undefined) return { message: (await create(body)) as Message, toolInputs: new Map() };
  const response = await create({ ...body, stream: true });
  if (Symbol.asyncIterator in response) return assembleAnthropicMessage(response, onText);
  return { message: response, toolInputs: new Map() };
}

function betaMessages(
  client: AnthropicMessagesClient | Anthropic,
): NonNullable<AnthropicMessagesClient['beta']>['messages'] {
  if (client.beta === undefined) {
    throw ApplicationFailure.create({
      type: FailureType.ProviderCompactionUnsupported,
      nonRetryable: true,
      message: "The worker's Anthropic client has no beta Messages API, which provider compaction needs.",
    });
  }
  return client.beta.messages as NonNullable<AnthropicMessagesClient['beta']>['messages'];
}

/** The provider-neutral request as a Messages API body, with cache breakpoints and thinking as the API wants them. */
export function toAnthropicRequest(request: ProviderRequest): MessageCreateParamsNonStreaming {
  const systemPrompts = request.messages.flatMap((message) => (message.role === 'system' ? [message.content] : []));
  const system: TextBlockParam[] = systemPrompts.map((text) => ({ type: 'text', text }));
  if (system.length > 0) system[system.length - 1]!.cache_control = CACHE_BREAKPOINT;
  // After the breakpoint: the final-answer instruction is for this call only and must not spoil the cached prefix.
  if (request.instruction) system.push({ type: 'text', text: request.instruction });

  const messages = toAnthropicMessages(request.messages);
  const last = messages.at(-1);
  if (last !== undefined && Array.isArray(last.content)) {
    const block = last.content.at(-1);
    if (block !== undefined && block.type !== 'thinking' && block.type !== 'redacted_thinking') {
      block.cache_control = CACHE_BREAKPOINT;
    }
  }
  const tools: Tool[] = request.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: { ...tool.inputSchema, type: 'object' },
  }));
  if (tools.length > 0) tools[tools.length - 1]!.cache_control = CACHE_BREAKPOINT;

  const maxTokens = request.maxCompletionTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS;
  // The budget must stay below max_tokens; the turn's token budget may leave too little to think at all.
  const thinkingBudget = request.thinking ? Math.min(request.thinking.budgetTokens, maxTokens - 1) : 0;
  const thinking = thinkingBudget >= MIN_THINKING_BUDGET_TOKENS;
  return {
    model: request.model,
    max_tokens: maxTokens,
    messages,
    ...(system.length > 0 ? { system } : {}),
    ...(tools.length > 0 ? { tools, tool_choice: { type: request.toolChoice } } : {}),
    // Thinking accepts no other temperature than the default.
    ...(request.temperature !== undefined && !thinking ? { temperature: request.temperature } : {}),
    ...(thinking ? { thinking: { type: 'enabled', budget_tokens: thinkingBudget } } : {}),
    // Anthropic's format has a schema only: no name, and its own rules instead of a strict flag.
    ...(request.responseFormat
      ? { output_config: { format: { type: 'json_schema', schema: request.responseFormat.schema } } }
      : {}),
  };
}

/**
 * The transcript as Messages API turns: the assistant's reasoning, text and `tool_use` blocks; each run of tool
 * messages (and a user message after them) as one `user` turn of `tool_result` blocks, `is_error` for every outcome but
 * `ok`. System messages go to `system` instead.
 */
export function toAnthropicMessages(messagesWithCompactions: readonly ChatMessage[]): MessageParam[] {
  // The latest compaction block stands for everything before it: what came before is not sent again.
  const transcript = fromLatestProviderCompaction(messagesWithCompactions, 'anthropic_compaction');
  const messages: MessageParam[] = [];
  const append = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return;
    const previous = messages.at(-1);
    // The API wants turns to alternate; consecutive messages of one role become one turn.
    if (previous?.role === role && Array.isArray(previous.content)) previous.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  for (const message of transcript) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        append('user', [{ type: 'text', text: message.content }]);
        break;
      case 'tool':
        append('user', [
          {
            type: 'tool_result',
            tool_use_id: message.toolCallId,
            content: message.content,
            ...(message.outcome === 'ok' ? {} : { is_error: true }),
          },
        ]);
        break;
      case 'assistant':
        append('assistant', [
          // Only on the beta API's requests: a transcript holds one only when the conversation asked for compaction.
          ...((message.providerCompaction
            ? toCompactionBlock(message.providerCompaction)
            : []) as unknown as ContentBlockParam[]),
          ...(message.reasoning ?? []).flatMap(toThinkingBlock),
          ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
          ...(message.toolCalls ?? []).map((call) => ({
            type: 'tool_use' as const,
            id: call.id,
            name: call.name,
            input: toolInput(call),
          })),
        ]);
        break;
    }
  }
  return messages;
}

function toThinkingBlock(item: ReasoningItem): ContentBlockParam[] {
  if (item.type === 'anthropic_thinking') {
    return [{ type: 'thinking', thinking: item.thinking, signature: item.signature }];
  }
  if (item.type === 'anthropic_redacted_thinking') return [{ type: 'redacted_thinking', data: item.data }];
  // Another provider's reasoning means nothing here.
  return [];
}

/** The API wants an object; arguments that were not one were answered with an error, so what is sent matters little. */
function toolInput(call: ToolCall): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(call.arguments);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  pause_turn: 'pause_turn',
};

/**
 * The message as the transcript's assistant message. With `toolsDisabled` (the final-answer call) any tool_use blocks
 * are dropped, since they would never get results. `toolInputs` holds the streamed JSON text of tool inputs.
 */
export function fromAnthropicMessage(
  message: Message,
  toolInputs: ReadonlyMap<string, string>,
  toolsDisabled: boolean,
): ProviderAnswer {
  if (message.stop_reason === 'refusal') {
    throw ApplicationFailure.create({
      type: FailureType.ModelContentFiltered,
      nonRetryable: true,
      message: `The model refused to answer (stop reason "refusal", message ${message.id}).`,
    });
  }
  let text = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: ReasoningItem[] = [];
  let providerCompaction: ProviderCompaction | undefined;
  for (const block of message.content as (ContentBlock | CompactionBlock)[]) {
    if (block.type === 'compaction') providerCompaction = fromCompactionBlock(block);
    else if (block.type === 'text') text += block.text;
    else if (block.type === 'thinking') {
      reasoning.push({ type: 'anthropic_thinking', thinking: block.thinking, signature: block.signature });
    } else if (block.type === 'redacted_thinking') {
      reasoning.push({ type: 'anthropic_redacted_thinking', data: block.data });
    } else if (block.type === 'tool_use' && !toolsDisabled) {
      toolCalls.push({
        id: block.id,
        name: block.name,
        arguments: toolInputs.get(block.id) ?? JSON.stringify(block.input),
      });
    }
  }
  const assistant: AssistantMessage = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    ...(toolCalls.length > 0 ? { toolCalls } : {}),
    ...(reasoning.length > 0 ? { reasoning } : {}),
    ...(providerCompaction ? { providerCompaction } : {}),
  };
  const stopReason = message.stop_reason ?? 'end_turn';
  const edits = appliedEdits(
    (message as { context_management?: BetaContextManagementResponse | null }).context_management,
    providerCompaction !== undefined,
  );
  return {
    message: assistant,
    usage: fromAnthropicUsage(message.usage),
    finishReason: FINISH_REASONS[stopReason] ?? stopReason,
    model: message.model,
    ...(edits.length > 0 ? { contextEdits: edits } : {}),
  };
}

/** The counts of Anthropic's usage that the transcript keeps. */
export type AnthropicUsage = Pick<
  Message['usage'],
  'input_tokens' | 'output_tokens' | 'cache_creation_input_tokens' | 'cache_read_input_tokens'
> & { output_tokens_details?: Message['usage']['output_tokens_details'] };

/**
 * Anthropic's `input_tokens` leaves out the tokens written to and read from the cache; the turn's token budget and the
 * price count every token the model read, so they are added back, and kept apart as the parts priced on their own
 * (docs/models.md). Thinking tokens are within `output_tokens`.
 */
export function fromAnthropicUsage(usage: AnthropicUsage): TokenUsage {
  const cacheWriteTokens = usage.cache_creation_input_tokens ?? 0;
  const cacheReadTokens = usage.cache_read_input_tokens ?? 0;
  const reasoningTokens = usage.output_tokens_details?.thinking_tokens ?? 0;
  const inputTokens = (usage.input_tokens ?? 0) + cacheWriteTokens + cacheReadTokens;
  const outputTokens = usage.output_tokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: inputTokens + outputTokens,
    ...(cacheReadTokens > 0 ? { cacheReadTokens } : {}),
    ...(cacheWriteTokens > 0 ? { cacheWriteTokens } : {}),
    ...(reasoningTokens > 0 ? { reasoningTokens } : {}),
  };
}

/** A paused answer and its continuation as one: text, calls and reasoning in order, usage summed. */
function joinAnswers(first: ProviderAnswer, next: ProviderAnswer): ProviderAnswer {
  const toolCalls = [...(first.message.toolCalls ?? []), ...(next.message.toolCalls ?? [])];
  const reasoning = [...(first.message.reasoning ?? []), ...(next.message.reasoning ?? [])];
  const text = (first.message.content ?? '') + (next.message.content ?? '');
  const sum = (key: keyof TokenUsage) => (first.usage[key] ?? 0) + (next.usage[key] ?? 0);
  const providerCompaction = next.message.providerCompaction ?? first.message.providerCompaction;
  const contextEdits = [...(first.contextEdits ?? []), ...(next.contextEdits ?? [])];
  return {
    ...next,
    message: {
      role: 'assistant',
      content: text === '' && toolCalls.length > 0 ? null : text,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
      ...(reasoning.length > 0 ? { reasoning } : {}),
      ...(providerCompaction ? { providerCompaction } : {}),
    },
    ...(contextEdits.length > 0 ? { contextEdits } : {}),
    usage: fromAnthropicUsage({
      input_tokens: sum('inputTokens') - sum('cacheReadTokens') - sum('cacheWriteTokens'),
      output_tokens: sum('outputTokens'),
      cache_read_input_tokens: sum('cacheReadTokens'),
      cache_creation_input_tokens: sum('cacheWriteTokens'),
      output_tokens_details: { thinking_tokens: sum('reasoningTokens') },
    }),
  };
}
