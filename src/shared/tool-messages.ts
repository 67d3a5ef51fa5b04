import type { CallToolResult, ToolMessage } from './types.js';

/**
 * The transcript message of a tool call's result. The workflow appends it, and the worker that ran the call keeps the
 * same message, so the next model call can name it by its transcript position instead of carrying it again: both
 * sides build it here, and the transcript's chained digest proves they built the same.
 */
export function toolResultMessage(
  call: { id: string; name: string },
  result: Pick<CallToolResult, 'outcome' | 'content'>,
): ToolMessage {
  return { role: 'tool', toolCallId: call.id, name: call.name, outcome: result.outcome, content: result.content };
}
