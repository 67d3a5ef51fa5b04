import { setTimeout as sleep } from 'node:timers/promises';
import type { ConversationEndedError, ConversationStatusReport, DurableAgentClient } from '../client/index.js';

/**
 * Where a conversation stands before a command signals it, so `interrupt` and `end` can say what really happened: a
 * signal to a closed run is never delivered, and one to a conversation without a running turn changes nothing.
 */
export type ConversationLookup =
  /** The latest run is open, with or without a running turn ({@link runningTurn}). */
  | { kind: 'open'; status: ConversationStatusReport }
  /** The run closed after its idle timeout; the next message reopens it. */
  | { kind: 'closed-idle'; status: ConversationStatusReport }
  /** It ended (or its run failed, was terminated, timed out or was cancelled): it takes nothing any more. */
  | { kind: 'ended'; error: ConversationEndedError };

/** How many times to look again while the latest run is continuing as new (a moment in between two runs). */
const MAX_ROLLOVER_LOOKS = 10;

/** Look the conversation up; a missing one throws `ConversationNotFoundError` (exit code 3). */
export async function lookUpConversation(
  client: DurableAgentClient,
  conversationId: string,
): Promise<ConversationLookup> {
  const [{ ConversationRuns, ENDED_STATUSES }, { ConversationEndedError }] = await Promise.all([
    import('../client/conversation-runs.js'),
    import('../client/errors.js'),
  ]);
  const runs = new ConversationRuns(client.client, client.taskQueue);
  for (let look = 1; ; look++) {
    const { status: runStatus } = await runs.describe(conversationId);
    // A failed or terminated run answers no status query without a worker replaying it: its Temporal status says it.
    const endedReason = ENDED_STATUSES[runStatus];
    if (endedReason !== undefined) {
      return { kind: 'ended', error: new ConversationEndedError(conversationId, endedReason) };
    }
    if (runStatus === 'CONTINUED_AS_NEW' && look < MAX_ROLLOVER_LOOKS) {
      await sleep(100 * look);
      continue;
    }
    const status = await client.status(conversationId);
    // `ended` on an open run: `end` was received and no turn is left, the run is closing.
    if (status.phase === 'ended') {
      return { kind: 'ended', error: new ConversationEndedError(conversationId, 'ended') };
    }
    return status.open ? { kind: 'open', status } : { kind: 'closed-idle', status };
  }
}

/** The number of the turn running now, or undefined when none runs. */
export function runningTurn(found: ConversationLookup): number | undefined {
  if (found.kind !== 'open' || found.status.phase === 'idle' || found.status.phase === 'ended') return undefined;
  // `currentTurn` appears with the turn's first progress report; the turn count already includes the running turn.
  return found.status.currentTurn?.turn ?? found.status.turns;
}
