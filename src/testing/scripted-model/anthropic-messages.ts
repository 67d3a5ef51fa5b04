import type { JsonObject, JsonValue } from '../../shared/types.js';
import {
  digest,
  finishReasonOf,
  scriptedUsage,
  splitArguments,
  splitContent,
  toolCallsOf,
  type CompletionStep,
  type ResponseContext,
  type ToolCallText,
} from './response.js';
import type { FinishReason } from './script.js';
import { missingField, type WireFormat } from './wire-format.js';

/**
 * Anthropic's Messages API (`POST /v1/messages`), as `@anthropic-ai/sdk` reads it: the answer's content blocks
 * (thinking, text, tool_use), stop reasons, usage with cache counts, the streamed events, and `{type: "error"}` bodies.
 */

const STOP_REASONS: Record<FinishReason, string> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

/** Error types by status, as the Messages API names them. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** The signature the scripted model gives a thinking block: derived from the text, so a test can check it came back. */
export function thinkingSignature(thinking: string): string {
  return `sig_${digest('thinking', thinking)}`;
}

function anthropicError(status: number, message: string): JsonValue {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message } };
}

type ContentBlock =
  | { type: 'compaction'; content: string; encrypted_content: null }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string; citations: null }
  | { type: 'tool_use'; id: string; name: string; input: JsonValue; arguments: string };

function toolUseId(call: ToolCallText): string {
  return call.id.replace(/^call_/, 'toolu_');
}

/** The input object of a tool_use block; a scripted string that is not a JSON object is sent as an empty input. */
function inputOf(text: string): JsonValue {
  try {
    const value = JSON.parse(text) as JsonValue;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

function blocksOf(step: CompletionStep, context: ResponseContext): ContentBlock[] {
  const blocks: ContentBlock[] = [];
  // A compaction comes first: the model answered from the compacted input.
  if (context.managed?.compaction !== undefined) {
    blocks.push({ type: 'compaction', content: context.managed.compaction, encrypted_content: null });
  }
  if (step.reasoning !== undefined) {
    blocks.push({ type: 'thinking', thinking: step.reasoning, signature: thinkingSignature(step.reasoning) });
  }
  if (step.content !== undefined && step.content !== '')
    blocks.push({ type: 'text', text: step.content, citations: null });
  for (const call of toolCallsOf(step, context)) {
    blocks.push({
      type: 'tool_use',
      id: toolUseId(call),
      name: call.name,
      input: inputOf(call.arguments),
      arguments: call.arguments,
    });
  }
  return blocks;
}

/** Anthropic counts the cache apart: its `input_tokens` is what the model read besides the cache. */
function usageOf(step: CompletionStep, context: ResponseContext): JsonObject {
  const tokens = scriptedUsage(step, toolCallsOf(step, context), context);
  const cacheRead = tokens.cacheRead ?? 0;
  const cacheWrite = tokens.cacheWrite ?? 0;
  return {
    input_tokens: tokens.input - cacheRead - cacheWrite,
    output_tokens: tokens.output,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    output_tokens_details: tokens.reasoning === undefined ? null : { thinking_tokens: tokens.reasoning },
  };
}

/** The beta API's report of the edits it applied, on answers to requests that asked for context management. */
function contextManagementOf(context: ResponseContext): JsonObject {
  return context.managed ? { context_management: { applied_edits: context.managed.appliedEdits } } : {};
}

function messageId(context: ResponseContext): string {
  return `msg_${digest('message', context.conversation, context.stepIndex)}`;
}

function wireBlock(block: ContentBlock): JsonObject {
  if (block.type !== 'tool_use') return block;
  return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
}

export const anthropicMessages: WireFormat = {
  api: 'messages',
  framing: { namedEvents: true, done: false },
  carriesText: (event) => (event as { delta?: { type?: unknown } }).delta?.type === 'text_delta',

  problem(body) {
    const missing = missingField(body, { model: 'string', messages: 'array', max_tokens: 'number' });
    if (missing) return `${missing.name}: Field required`;
    if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) {
      return 'system: Input should be a valid string or a list of text blocks';
    }
    return undefined;
  },

  answer(step, context) {
    return {
      id: messageId(context),
      type: 'message',
      role: 'assistant',
      model: context.model,
      content: blocksOf(step, context).map(wireBlock),
      stop_reason: STOP_REASONS[finishReasonOf(step)],
      stop_sequence: null,
      usage: usageOf(step, context),
      ...contextManagementOf(context),
    };
  },

  events(step, context) {
    const usage = usageOf(step, context);
    const events: JsonObject[] = [
      {
        type: 'message_start',
        message: {
          id: messageId(context),
          type: 'message',
          role: 'assistant',
          model: context.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          // The output's counts come with message_delta, as Anthropic streams them.
          usage: { ...usage, output_tokens: 1, output_tokens_details: null },
        },
      },
    ];
    blocksOf(step, context).forEach((block, index) => {
      const delta = (value: JsonObject) => events.push({ type: 'content_block_delta', index, delta: value });
      if (block.type === 'compaction') {
        events.push({ type: 'content_block_start', index, content_block: { ...block, content: null } });
        delta({ type: 'compaction_delta', content: block.content, encrypted_content: null });
      } else if (block.type === 'thinking') {
        events.push({
          type: 'content_block_start',
          index,
          content_block: { type: 'thinking', thinking: '', signature: '' },
        });
        for (const piece of splitContent(block.thinking)) delta({ type: 'thinking_delta', thinking: piece });
        delta({ type: 'signature_delta', signature: block.signature });
      } else if (block.type === 'text') {
        events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } });
        for (const piece of splitContent(block.text)) delta({ type: 'text_delta', text: piece });
      } else {
        events.push({
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        for (const piece of splitArguments(block.arguments)) delta({ type: 'input_json_delta', partial_json: piece });
      }
      events.push({ type: 'content_block_stop', index });
    });
    events.push(
      {
        type: 'message_delta',
        delta: { stop_reason: STOP_REASONS[finishReasonOf(step)], stop_sequence: null },
        ...contextManagementOf(context),
        usage: { output_tokens: usage.output_tokens ?? 0, output_tokens_details: usage.output_tokens_details ?? null },
      },
      { type: 'message_stop' },
    );
    return events;
  },

  errorBody: anthropicError,
  scriptedErrorBody: (status, stepIndex, scriptName) =>
    anthropicError(status, `Scripted error ${status} from step ${stepIndex} of ${scriptName}.`),
};
