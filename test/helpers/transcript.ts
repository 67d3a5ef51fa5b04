import type OpenAI from 'openai';
import type { ChatMessage } from '../../src/shared/types.js';
import { expect } from 'vitest';

type WireMessage = OpenAI.Chat.ChatCompletionMessageParam;

/**
 * What OpenAI-compatible APIs enforce: every tool call of an assistant message is answered by exactly one tool
 * message before the next assistant or user message, and no tool message answers a call that was not made.
 */
export function expectValidToolPairing(messages: readonly WireMessage[]): void {
  let open = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      expect(open.has(message.tool_call_id), `message ${index} answers unknown call ${message.tool_call_id}`).toBe(
        true,
      );
      open.delete(message.tool_call_id);
      continue;
    }
    expect([...open], `calls left without a result before message ${index}`).toEqual([]);
    open = new Set(message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : []);
  }
  expect([...open], 'calls left without a result at the end').toEqual([]);
}

/** The tool messages of a request, in order, as `{ id, content }`. */
export function toolResults(messages: readonly WireMessage[]): { id: string; content: string }[] {
  return messages.flatMap((message) =>
    message.role === 'tool'
      ? [
          {
            id: message.tool_call_id,
            content: typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
          },
        ]
      : [],
  );
}

/**
 * A transcript with what differs by provider or by run taken out: tool call ids renumbered `call-1`, `call-2`, … in
 * the order the calls were made (each API has its own id format), and user messages without their ids.
 */
export function neutralTranscript(messages: readonly ChatMessage[]): ChatMessage[] {
  const ids = new Map<string, string>();
  const idOf = (id: string) => ids.get(id) ?? ids.set(id, `call-${ids.size + 1}`).get(id)!;
  return messages.map((message) => {
    if (message.role === 'user') return { role: 'user', content: message.content };
    if (message.role === 'tool') return { ...message, toolCallId: idOf(message.toolCallId) };
    if (message.role === 'assistant' && message.toolCalls) {
      return { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call, id: idOf(call.id) })) };
    }
    return message;
  });
}
