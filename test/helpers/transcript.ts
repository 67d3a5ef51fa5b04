import type OpenAI from 'openai';
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
