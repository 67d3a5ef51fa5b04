import { conversationCost } from '../workflows/cost-budget.js';
import { conversationWorkflowId, statusQuery } from '../workflows/definitions.js';
import type { ConversationRuns } from './conversation-runs.js';
import { queryRun } from './run-queries.js';
import type { ConversationStatusReport } from './types.js';

/**
 * The conversation's state as its latest run has it: a completed run's from its outcome, any other's from the `status`
 * query. A run that closes while it is asked is read again, closed. `DurableAgentClient.status` is the public way in.
 * @internal
 */
export async function conversationStatus(
  runs: ConversationRuns,
  conversationId: string,
): Promise<ConversationStatusReport> {
  const description = await runs.describe(conversationId);
  const base = { workflowId: conversationWorkflowId(conversationId), runId: description.runId };
  if (description.status === 'COMPLETED') {
    const outcome = await runs.outcome(conversationId, description.runId);
    const { state } = outcome;
    return {
      ...base,
      open: false,
      conversationId,
      phase: outcome.closedBecause === 'ended' ? 'ended' : 'idle',
      turns: state.turns,
      queued: state.queue.length,
      transcriptLength: state.transcriptOffset + state.transcript.length,
      transcriptOffset: state.transcriptOffset,
      cost: conversationCost(state),
      ...(state.lastResult ? { lastResult: state.lastResult } : {}),
    };
  }
  if (description.status === 'RUNNING') {
    const status = await queryRun(
      runs,
      conversationId,
      description.runId,
      (handle) => handle.query(statusQuery),
      // Read again: the latest run is now closed (or a newer one runs).
      () => Promise.resolve(undefined),
    );
    if (status !== undefined) return { ...base, open: true, ...status };
    return await conversationStatus(runs, conversationId);
  }
  // A run that failed, was terminated or timed out answers from its history: the state it had when it closed.
  const status = await runs.handle(conversationId, description.runId).query(statusQuery);
  return { ...base, ...status, open: false, phase: 'ended', currentTurn: undefined };
}
