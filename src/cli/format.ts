import type { ChatMessage, UnavailableServer } from '../shared/types.js';
import type { ApprovalDecision, TurnResult } from '../workflows/definitions.js';

/** How the CLI shows messages, tool calls and results to a person. */

/** `text` on one line, cut to `max` characters with an ellipsis. */
export function shorten(text: string, max = 80): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

/** Tool arguments as compact JSON, cut short: `{"name":"Ada"}`. */
export function shortArguments(argumentsJson: string, max = 60): string {
  let text = argumentsJson;
  try {
    text = JSON.stringify(JSON.parse(argumentsJson));
  } catch {
    // Malformed arguments are shown as the model wrote them.
  }
  return shorten(text, max);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** One transcript message as `history` prints it. */
export function formatMessage(message: ChatMessage, index: number): string {
  const at = `[${index}]`;
  switch (message.role) {
    case 'system': {
      const summary = message.compaction;
      if (summary === undefined) return `${at} system: ${message.content}`;
      // What the model sees in place of messages [0, to) but the system prompt (docs/models.md#compaction).
      const what = `messages up to [${summary.to - 1}], newly [${summary.from}]-[${summary.to - 1}]`;
      return `${at} summary of ${what} (${summary.reason}, ~${summary.tokensBefore} tokens before): ${message.content}`;
    }
    case 'user':
      return `${at} user: ${message.content}`;
    case 'assistant': {
      const lines: string[] = [];
      const compacted = message.providerCompaction;
      // The provider's own compaction (docs/models.md#provider-native-compaction): it stands for everything before it.
      if (compacted?.type === 'anthropic_compaction') {
        lines.push(`${at} provider compaction of everything before: ${compacted.content ?? '(failed: no summary)'}`);
      } else if (compacted?.type === 'openai_compaction') {
        lines.push(`${at} provider compaction of everything before (encrypted by the provider, ${compacted.id})`);
      }
      if (message.content !== null && message.content !== '') lines.push(`${at} assistant: ${message.content}`);
      for (const call of message.toolCalls ?? []) {
        lines.push(`${at} assistant → ${call.name} ${shortArguments(call.arguments)}`);
      }
      return lines.length > 0 ? lines.join('\n') : `${at} assistant: (no content)`;
    }
    case 'tool':
      return `${at} tool ${message.name} (${message.outcome}): ${shorten(message.content, 200)}`;
  }
}

/** A line saying why a turn stopped, when it did not simply complete. */
export function describeStop(result: TurnResult): string | undefined {
  if (result.stopReason === 'completed') return undefined;
  if (result.stopReason === 'cancelled') return 'The turn was interrupted.';
  if (result.stopReason.startsWith('budget:')) {
    const limit = result.stopReason.slice('budget:'.length);
    return result.answer === null
      ? `The turn ran out of its ${limit} budget without an answer.`
      : `The turn ran out of its ${limit} budget; this is its final answer.`;
  }
  const detail = result.error ? `: ${result.error.message}` : '';
  return `The turn failed (${result.stopReason})${detail}`;
}

/**
 * A line saying that an MCP server was left out of a turn, and why (`TurnResult.unavailableServers`), the reason cut to
 * `max` characters.
 */
export function describeUnavailableServer({ server, reason }: UnavailableServer, max = 100): string {
  return `MCP server ${server} is unavailable this turn (its tools are left out): ${shorten(reason, max)}`;
}

/**
 * Whether a turn counts as answered for exit codes: completed, or stopped by a budget but still answered (the final
 * answer call). Cancelled, failed, and budget stops without an answer are not.
 */
export function answered(result: TurnResult): boolean {
  return result.answer !== null && (result.stopReason === 'completed' || result.stopReason.startsWith('budget:'));
}

/** How the chat shows a decision, whoever made it. */
export function describeDecision(decision: ApprovalDecision): string {
  const { tool, by } = decision;
  if (by === 'interrupt') return `  ✗ ${tool} cancelled: the turn was interrupted`;
  const who = by !== undefined ? ` by ${by}` : '';
  if (decision.decision === 'denied') {
    return `  ✗ ${tool} denied${who}${decision.reason !== undefined ? `: ${shorten(decision.reason, 200)}` : ''}`;
  }
  const edited = decision.arguments !== undefined ? ` with ${shorten(JSON.stringify(decision.arguments), 100)}` : '';
  const always = decision.always ? ' (and for the rest of the conversation)' : '';
  return `  ✓ ${tool} approved${who}${edited}${always}`;
}
