import { ApplicationFailure } from '@temporalio/common';
import type {
  ContentBlock,
  Message,
  RawMessageStreamEvent,
  RedactedThinkingBlock,
  TextBlock,
  ThinkingBlock,
  ToolUseBlock,
} from '@anthropic-ai/sdk/resources/messages';
import { FailureType } from '../../../../shared/errors.js';
import type { CompactionBlock } from './anthropic-context.js';

/** A block as the stream builds it; a tool_use keeps its input as the JSON text the model wrote. */
type BuildingBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; json: string }
  | CompactionBlock;

/**
 * A streamed message's content with its tool inputs still as text: a model may stream arguments that are not JSON, and
 * the turn answers those with an error the model can correct, as it does for Chat Completions.
 */
export interface AssembledMessage {
  message: Message;
  /** The JSON text of each tool_use block's input, by block id. */
  toolInputs: Map<string, string>;
}

/**
 * Assemble Anthropic's stream events into the message the same request would have got without streaming; `onText`
 * gets each piece of text as it arrives (thinking is not model-visible text and is not streamed).
 */
export async function assembleAnthropicMessage(
  events: AsyncIterable<RawMessageStreamEvent>,
  onText: (text: string) => void,
): Promise<AssembledMessage> {
  let message: Message | undefined;
  const blocks: BuildingBlock[] = [];
  let stopped = false;
  for await (const event of events) {
    switch (event.type) {
      case 'message_start':
        message = { ...event.message, content: [] };
        break;
      case 'content_block_start':
        blocks[event.index] = startBlock(event.content_block);
        break;
      case 'content_block_delta': {
        const block = blocks[event.index];
        const { delta } = event;
        if (block?.type === 'text' && delta.type === 'text_delta') {
          block.text += delta.text;
          if (delta.text !== '') onText(delta.text);
        } else if (block?.type === 'thinking' && delta.type === 'thinking_delta') block.thinking += delta.thinking;
        else if (block?.type === 'thinking' && delta.type === 'signature_delta') block.signature += delta.signature;
        else if (block?.type === 'tool_use' && delta.type === 'input_json_delta') block.json += delta.partial_json;
        else if (block?.type === 'compaction') addCompactionDelta(block, delta as unknown as CompactionDelta);
        break;
      }
      case 'message_delta':
        if (message) {
          message.stop_reason = event.delta.stop_reason;
          message.stop_sequence = event.delta.stop_sequence;
          message.usage = { ...message.usage, ...withoutNulls(event.usage) } as Message['usage'];
          // The beta API's context editing reports what it applied here (anthropic-context.ts).
          const { context_management } = event as { context_management?: unknown };
          if (context_management) Object.assign(message, { context_management });
        }
        break;
      case 'message_stop':
        stopped = true;
        break;
    }
  }
  if (message === undefined || !stopped || message.stop_reason === null) {
    // A stream that ended before message_stop was cut short: retry it like a dropped connection.
    throw ApplicationFailure.create({
      type: FailureType.ModelInvalidResponse,
      message: `The model's stream ended before message_stop${message ? ` (message ${message.id})` : ''}.`,
    });
  }
  const toolInputs = new Map<string, string>();
  message.content = blocks.filter((block) => block !== undefined).map((block) => finishBlock(block, toolInputs));
  return { message, toolInputs };
}

/** A `compaction_delta` of the beta API: the summary and the opaque content, each when it has them. */
interface CompactionDelta {
  type: 'compaction_delta';
  content: string | null;
  encrypted_content?: string | null;
}

function addCompactionDelta(block: CompactionBlock, delta: CompactionDelta): void {
  if (delta.type !== 'compaction_delta') return;
  if (delta.content !== null) block.content = (block.content ?? '') + delta.content;
  if (delta.encrypted_content) block.encrypted_content = (block.encrypted_content ?? '') + delta.encrypted_content;
}

function startBlock(started: ContentBlock): BuildingBlock {
  const block = started as ContentBlock | CompactionBlock;
  switch (block.type) {
    case 'compaction':
      return { ...block };
    case 'text':
      return { type: 'text', text: block.text };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, json: '' };
    default:
      // Server tools are never offered, so their blocks do not come; an empty text keeps the indexes in place.
      return { type: 'text', text: '' };
  }
}

function finishBlock(block: BuildingBlock, toolInputs: Map<string, string>): ContentBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text, citations: null } satisfies TextBlock;
    case 'thinking':
      return block satisfies ThinkingBlock;
    case 'redacted_thinking':
      return block satisfies RedactedThinkingBlock;
    case 'tool_use':
      toolInputs.set(block.id, block.json === '' ? '{}' : block.json);
      return { type: 'tool_use', id: block.id, name: block.name, input: {} } as ToolUseBlock;
    case 'compaction':
      return block as unknown as ContentBlock;
  }
}

/** The counts a message_delta carries; null means "no change". */
function withoutNulls<T extends object>(usage: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(usage).filter(([, value]) => value !== null && value !== undefined),
  ) as Partial<T>;
}
