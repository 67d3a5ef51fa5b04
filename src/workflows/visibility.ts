import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import type { ConversationPhase, ConversationStatus } from './definitions.js';
import { preview } from './stream-events.js';

/** How much of a pending call's arguments the current details show. */
const ARGUMENTS_PREVIEW_CHARS = 120;

/**
 * How a conversation shows in Temporal's lists and Web UI: search attributes (status, turns, conversation id) to
 * filter by, and the current details a person reads on the workflow's page.
 */
export class Visibility {
  private published: { status: ConversationPhase; turns: number } | undefined;

  /**
   * Upsert the search attributes when the phase or the turn count changed, then describe. Only on change: each
   * upsert is a history event and a visibility write.
   */
  publish(status: ConversationStatus): void {
    if (this.published?.status !== status.phase || this.published.turns !== status.turns) {
      upsertSearchAttributes([
        { key: SearchAttribute.status, value: status.phase },
        { key: SearchAttribute.turns, value: status.turns },
        // Set once per run; continue-as-new carries search attributes over.
        ...(this.published ? [] : [{ key: SearchAttribute.conversationId, value: status.conversationId }]),
      ]);
      this.published = { status: status.phase, turns: status.turns };
    }
    this.describe(status);
  }

  /** Update the current details only (no history event). */
  describe(status: ConversationStatus): void {
    setCurrentDetails(currentDetails(status));
  }
}

/** The Web UI's current details of a conversation: its phase and queue, and the running turn's progress or the last result. */
export function currentDetails(status: ConversationStatus): string {
  const { conversationId, phase, turns, queued, currentTurn, lastResult } = status;
  const lines = [`**Conversation** \`${conversationId}\` · ${phase} · ${turns} turns · ${queued} queued`];
  if (currentTurn) {
    lines.push(
      `**Turn ${currentTurn.turn}** · ${currentTurn.activity}`,
      `rounds ${currentTurn.rounds} · tool calls ${currentTurn.toolCalls} · tokens ${currentTurn.usage.totalTokens}`,
    );
  } else if (lastResult) {
    lines.push(`Last turn ${lastResult.turn}: ${lastResult.stopReason}`);
  }
  for (const pending of status.pendingApprovals ?? []) {
    const shown = preview(JSON.stringify(pending.arguments), ARGUMENTS_PREVIEW_CHARS);
    lines.push(`**Awaiting approval** · ${pending.tool} ${pending.callId} · \`${shown}\` · ${pending.reason}`);
  }
  return lines.join('\n\n');
}
