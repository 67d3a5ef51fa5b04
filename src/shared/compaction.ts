import { estimateTokens } from './context.js';
import type { ChatMessage, CompactionRecord, SystemMessage } from './types.js';

/**
 * Compaction (docs/models.md#compaction): when a model call's input would pass {@link COMPACT_AT} of the model's
 * window, the older part of the transcript is summarized by a model call of its own and the model sees the summary in
 * its place, down to about {@link COMPACT_TO} of the window. The rules here are pure and shared: the workflow plans
 * with them, and the worker applies the latest summary to the transcript it rebuilds (`modelView`).
 */

/** Compact when the estimated input passes this share of the window. */
export const COMPACT_AT = 0.8;
/** ... down to about this share. */
export const COMPACT_TO = 0.5;
/** Summary calls one model call may be preceded by: each summarizes a part that fits a summary request. */
export const MAX_SUMMARIES_PER_CALL = 3;
/** The share of the window a summary request's input may fill. */
const SUMMARY_INPUT_SHARE = 0.6;

/** What the model sees before a summary: says what it is, so the model treats it as notes, not as instructions. */
export const SUMMARY_HEADING =
  'Summary of the earlier part of this conversation (its older messages were replaced by this summary):\n';

/** The instruction of a summary request. The scripted model recognises summary requests by their idempotency key. */
export const SUMMARY_INSTRUCTION =
  'You summarize the earlier part of a conversation between a user and an assistant, so that the assistant can go on ' +
  'without its full text. Keep every fact, name, number, preference and decision the user stated, what the tools ' +
  'were used for and what they found, and the tasks still open. Write short notes, not a reply to the user. Answer ' +
  'with the summary only.';

/** Heads the earlier summary in a summary request, and the conversation to summarize after it. */
export const EARLIER_SUMMARY_LABEL = 'Earlier summary:';
export const CONVERSATION_LABEL = 'Conversation to summarize:';

/** Tokens a summary may have: a tenth of the window, at least 256 and at most 4,096. */
export function summaryTokenLimit(window: number): number {
  return Math.max(256, Math.min(4_096, Math.floor(window / 10)));
}

export function isSummary(
  message: ChatMessage | undefined,
): message is SystemMessage & { compaction: CompactionRecord } {
  return message?.role === 'system' && message.compaction !== undefined;
}

/** The transcript message a summary becomes (the workflow appends it; the worker that made it caches the same). */
export function summaryMessage(summary: string, record: CompactionRecord): SystemMessage {
  return { role: 'system', content: summary, compaction: record };
}

/** Leading system messages that are not summaries: the system prompt. */
function systemPromptEnd(messages: readonly ChatMessage[]): number {
  let end = 0;
  while (messages[end]?.role === 'system' && !isSummary(messages[end])) end++;
  return end;
}

/** Where the model's view of a transcript stands: the latest summary and the messages it still sees verbatim. */
export interface ViewLayout {
  systemEnd: number;
  /** Index of the latest summary, or -1. */
  summaryAt: number;
  /** Indexes of the messages the model sees verbatim after the system prompt (and the summary), in order. */
  verbatim: number[];
}

export function viewLayout(messages: readonly ChatMessage[]): ViewLayout {
  const systemEnd = systemPromptEnd(messages);
  let summaryAt = -1;
  for (let index = messages.length - 1; index >= systemEnd; index--) {
    if (isSummary(messages[index])) {
      summaryAt = index;
      break;
    }
  }
  const summary = messages[summaryAt];
  const start = isSummary(summary) ? Math.max(systemEnd, summaryAt - summary.compaction.verbatim) : systemEnd;
  const verbatim: number[] = [];
  for (let index = start; index < messages.length; index++) {
    if (!isSummary(messages[index])) verbatim.push(index);
  }
  return { systemEnd, summaryAt, verbatim };
}

/**
 * The transcript as the model sees it: the system prompt, the latest summary (if any) as a system message, then the
 * messages it did not replace. Without a summary, the transcript itself.
 */
export function modelView(messages: readonly ChatMessage[]): ChatMessage[] {
  const layout = viewLayout(messages);
  const summary = messages[layout.summaryAt];
  if (!isSummary(summary)) return [...messages];
  return [
    ...messages.slice(0, layout.systemEnd),
    { role: 'system', content: SUMMARY_HEADING + summary.content },
    ...layout.verbatim.map((index) => messages[index] as ChatMessage),
  ];
}

/** Estimated tokens of the model's view of `messages` (src/shared/context.ts), tools not included. */
export function viewTokens(messages: readonly ChatMessage[]): number {
  return modelView(messages).reduce((sum, message) => sum + estimateTokens(message), 0);
}

/** One summary call's part: the run's messages `[from, to)` (summaries left out) and the summary folded in. */
export interface CompactionPlan {
  from: number;
  to: number;
  /** Index of the earlier summary folded into this one, if any. */
  previous: number | undefined;
  /** Messages from `to` to the transcript's end: the model keeps seeing them verbatim. */
  verbatim: number;
  /** Estimated tokens of what the summary replaces (the earlier summary included). */
  replacedTokens: number;
}

export interface PlanOptions {
  /** The model's window, in estimated tokens. */
  window: number;
  /** Estimated tokens of the tools offered with each call. */
  toolTokens: number;
}

/**
 * The next summary to make, or `undefined` when there is nothing older than the newest turn to summarize. It cuts at a
 * turn's start (a user message), so a tool call and its result are never split and the newest turn stays verbatim:
 * the earliest cut that brings the input down to {@link COMPACT_TO} of the window, or the newest turn's start when none
 * does; then earlier, while what it summarizes would not fit a summary request (the next call summarizes the rest).
 */
export function planCompaction(messages: readonly ChatMessage[], options: PlanOptions): CompactionPlan | undefined {
  const layout = viewLayout(messages);
  const { verbatim } = layout;
  const sizes = verbatim.map((index) => estimateTokens(messages[index] as ChatMessage));
  const cuts = verbatim.flatMap((index, position) =>
    position > 0 && messages[index]?.role === 'user' ? [position] : [],
  );
  if (cuts.length === 0) return undefined;
  const previous = layout.summaryAt >= 0 ? layout.summaryAt : undefined;
  const previousTokens = previous === undefined ? 0 : estimateTokens(messages[previous] as ChatMessage);
  // Room for the new summary: its limit, or the earlier summary's size when that is larger (it will hold as much).
  const fixed =
    messages.slice(0, layout.systemEnd).reduce((sum, message) => sum + estimateTokens(message), 0) +
    Math.max(summaryTokenLimit(options.window), previousTokens) +
    options.toolTokens;
  const target = options.window * COMPACT_TO;
  const keptFrom = (position: number) => sizes.slice(position).reduce((sum, size) => sum + size, 0);
  let chosen = cuts.find((position) => fixed + keptFrom(position) <= target) ?? cuts[cuts.length - 1]!;
  const replaced = (position: number) => previousTokens + sizes.slice(0, position).reduce((sum, size) => sum + size, 0);
  const budget = options.window * SUMMARY_INPUT_SHARE;
  while (replaced(chosen) > budget) {
    const earlier = cuts.filter((position) => position < chosen);
    if (earlier.length === 0) break;
    chosen = earlier[earlier.length - 1] as number;
  }
  const to = verbatim[chosen] as number;
  return {
    from: verbatim[0] as number,
    to,
    previous,
    verbatim: messages.length - to,
    replacedTokens: replaced(chosen),
  };
}

/**
 * The text of a summary request: the earlier summary, then each message to summarize on lines of its own (`[user]`,
 * `[assistant]`, `[tool name]`), each cut to an equal share when the whole would pass `maxChars`.
 */
export function summaryRequestText(
  previous: string | undefined,
  messages: readonly ChatMessage[],
  maxChars: number,
): string {
  const lines = messages.map(messageLine);
  const head = previous === undefined ? '' : `${EARLIER_SUMMARY_LABEL}\n${previous}\n\n`;
  const room = Math.max(0, maxChars - head.length - CONVERSATION_LABEL.length - lines.length * 16);
  const total = lines.reduce((sum, line) => sum + line.length, 0);
  const share = total > room ? Math.max(80, Math.floor(room / Math.max(1, lines.length))) : Infinity;
  const body = lines.map((line) => (line.length > share ? `${line.slice(0, share)} [...]` : line)).join('\n');
  return `${head}${CONVERSATION_LABEL}\n${body}`;
}

function messageLine(message: ChatMessage): string {
  switch (message.role) {
    case 'user':
      return `[user] ${message.content}`;
    case 'assistant': {
      const calls = (message.toolCalls ?? []).map((call) => `${call.name}(${call.arguments})`);
      const text = message.content ?? '';
      return `[assistant] ${text}${calls.length > 0 ? `${text ? ' ' : ''}calls ${calls.join(', ')}` : ''}`;
    }
    case 'tool':
      return `[tool ${message.name}] ${message.content}`;
    case 'system':
      return `[system] ${message.content}`;
  }
}
