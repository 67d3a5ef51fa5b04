import type { ChatMessage } from './types.js';

/**
 * Fitting the transcript into the model's context window.
 *
 * Tokens are estimated, not counted: about 4 characters per token for English text and JSON (the usual rule of
 * thumb for BPE tokenizers), plus a small per-message overhead for the role and separators. The estimate errs
 * high for code and low for some non-Latin scripts, so `maxInputTokens` should leave some headroom.
 */

export const CHARS_PER_TOKEN = 4;
export const TOKENS_PER_MESSAGE = 4;

export function estimateTokens(message: ChatMessage): number {
  let chars = 0;
  switch (message.role) {
    case 'assistant':
      chars += message.content?.length ?? 0;
      for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length + call.id.length;
      break;
    case 'tool':
      chars += message.content.length + message.toolCallId.length;
      break;
    default:
      chars += message.content.length;
  }
  return TOKENS_PER_MESSAGE + Math.ceil(chars / CHARS_PER_TOKEN);
}

export interface TrimResult {
  messages: ChatMessage[];
  /** How many messages were dropped from the start of the conversation (after the system prompt). */
  dropped: number;
  estimatedTokens: number;
}

/**
 * Drop the oldest whole turns until the estimate fits `maxInputTokens`. A turn starts at a user message, so a tool
 * call is never separated from its result. Leading system messages and the current (last) turn are always kept,
 * even when they alone exceed the limit: the model then answers with a context-length error that names the problem.
 * So is a provider's compaction item right after the system messages (the input as a provider sends it, cut at its
 * latest item): it stands for everything before it, so it is kept with the messages up to the next user message.
 */
export function trimToContext(messages: readonly ChatMessage[], maxInputTokens: number | undefined): TrimResult {
  const sizes = messages.map(estimateTokens);
  const total = sizes.reduce((sum, size) => sum + size, 0);
  if (maxInputTokens === undefined || total <= maxInputTokens) {
    return { messages: [...messages], dropped: 0, estimatedTokens: total };
  }
  let headEnd = 0;
  while (headEnd < messages.length && messages[headEnd]?.role === 'system') headEnd++;
  const turnStarts: number[] = [];
  for (let index = headEnd; index < messages.length; index++) {
    if (messages[index]?.role === 'user') turnStarts.push(index);
  }
  const head = messages[headEnd];
  if (head?.role === 'assistant' && head.providerCompaction !== undefined) {
    // Kept as the system messages are: the head ends where the first turn after the item starts.
    headEnd = turnStarts[0] ?? messages.length;
  }
  let estimated = total;
  let keepFrom = headEnd;
  for (const start of turnStarts.slice(1)) {
    if (estimated <= maxInputTokens) break;
    for (let index = keepFrom; index < start; index++) estimated -= sizes[index] ?? 0;
    keepFrom = start;
  }
  // Messages before the first user message (other than the head) belong to no turn: drop them with the first.
  if (estimated > maxInputTokens && keepFrom === headEnd && turnStarts[0] !== undefined && turnStarts[0] > headEnd) {
    for (let index = headEnd; index < turnStarts[0]; index++) estimated -= sizes[index] ?? 0;
    keepFrom = turnStarts[0];
  }
  return {
    messages: [...messages.slice(0, headEnd), ...messages.slice(keepFrom)],
    dropped: keepFrom - headEnd,
    estimatedTokens: estimated,
  };
}
