import { isSummary, viewLayout } from '../shared/compaction.js';
import type { ChatMessage } from '../shared/types.js';
import { carriedTranscript, MAX_CARRIED_TRANSCRIPT_CHARS } from './conversation-state.js';

/**
 * The part of the transcript carried into the next run when it holds a summary (docs/models.md#compaction): the system
 * prompt, then, in their order, the messages the model still sees verbatim and the latest summary among them, as many
 * of the newest whole turns as fit `maxChars`. What the summary replaced stays readable in this run's history. When
 * the turns that fit start after the summary, the summary is carried right after the system prompt (with no verbatim
 * messages before it), where the transcript reader counts it among the leading system messages a run repeats.
 *
 * `dropped` is what the run's `transcriptOffset` grows by: the next run's first message after its leading system
 * messages keeps its whole-conversation index. Without a summary, as {@link carriedTranscript}.
 */
export function carriedWithSummary(
  messages: readonly ChatMessage[],
  maxChars = MAX_CARRIED_TRANSCRIPT_CHARS,
): { messages: ChatMessage[]; dropped: number } {
  const layout = viewLayout(messages);
  const summary = messages[layout.summaryAt];
  if (summary?.role !== 'system' || summary.compaction === undefined) return carriedTranscript(messages, maxChars);
  const { systemEnd, summaryAt } = layout;
  const start = Math.min(layout.verbatim[0] ?? messages.length, summaryAt);
  const system = messages.slice(0, systemEnd);
  const size = (message: ChatMessage | undefined) => JSON.stringify(message).length;
  let chars = system.reduce((sum, message) => sum + size(message), 0) + size(summary);
  let keepFrom = messages.length;
  let turnChars = 0;
  for (let index = messages.length - 1; index >= start; index--) {
    if (index === summaryAt) continue;
    turnChars += size(messages[index]);
    if (messages[index]?.role !== 'user') continue;
    if (chars + turnChars > maxChars) break;
    chars += turnChars;
    turnChars = 0;
    keepFrom = index;
  }
  if (summaryAt >= keepFrom || (summaryAt === start && keepFrom === summaryAt + 1)) {
    const from = Math.min(keepFrom, summaryAt);
    return { messages: [...system, ...messages.slice(from)], dropped: from - systemEnd };
  }
  const moved: ChatMessage = { ...summary, compaction: { ...summary.compaction, verbatim: 0 } };
  return {
    messages: [...system, moved, ...messages.slice(keepFrom)],
    dropped: keepFrom - systemEnd - 1,
  };
}

/**
 * As {@link carriedWithSummary}, and with the provider's latest compaction item (docs/models.md#provider-native-compaction)
 * when the turns that fit start after it and no summary of durable-agent's own came after it: the next run then starts
 * at the assistant message that holds the item (the provider reads nothing before it), if everything from there fits
 * `maxChars`. Without such an item, exactly {@link carriedWithSummary}.
 */
export function carriedForNextRun(
  messages: readonly ChatMessage[],
  maxChars = MAX_CARRIED_TRANSCRIPT_CHARS,
): { messages: ChatMessage[]; dropped: number } {
  const carried = carriedWithSummary(messages, maxChars);
  let latest = messages.length - 1;
  while (latest >= 0 && !hasProviderCompaction(messages[latest])) latest--;
  if (latest < 0 || carried.messages.includes(messages[latest]!)) return carried;
  if (messages.slice(latest).some((message) => isSummary(message))) return carried;
  let systemEnd = 0;
  while (messages[systemEnd]?.role === 'system') systemEnd++;
  const kept = [...messages.slice(0, systemEnd), ...messages.slice(latest)];
  if (kept.reduce((sum, message) => sum + JSON.stringify(message).length, 0) > maxChars) return carried;
  return { messages: kept, dropped: latest - systemEnd };
}

function hasProviderCompaction(message: ChatMessage | undefined): boolean {
  return message?.role === 'assistant' && message.providerCompaction !== undefined;
}
