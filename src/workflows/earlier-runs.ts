import type {
  ConversationInput,
  ConversationOutcome,
  ConversationState,
  IncomingMessage,
  TurnResult,
} from './definitions.js';

/**
 * A run that did not continue from another (a new conversation, or a reopened one) looks for the earlier runs of its
 * workflow id before it answers anything. Temporal lets any client start a run over closed ones (its default reuse
 * policy allows it), and such a run knows nothing of them: without this look, a signal-with-start on the id of an ended
 * conversation would start a new, empty conversation, and the transcript and remembered message ids would be lost
 * from sight. The protocol (docs/protocol.md) says how to start and reopen so that this never happens; this is the net
 * under clients that do otherwise.
 */

/** Input of the `findEarlierRun` activity. */
export interface FindEarlierRunInput {
  workflowId: string;
  /** The run that asks, left out of the search. */
  runId: string;
}

/** A run that closed without a result (failed, terminated, timed out, cancelled): what its status query said. */
export interface BrokenRun {
  found: true;
  runId: string;
  /** Temporal's status: `FAILED`, `TERMINATED`, `TIMED_OUT` or `CANCELED`. */
  status: string;
  outcome?: undefined;
  turns?: number;
  transcriptLength?: number;
  lastResult?: TurnResult;
}

/**
 * What `findEarlierRun` found: the latest run of the workflow id before the asking one (at the end of its chain of
 * continue-as-new), or none. `unavailable` says why it could not look (a server without visibility).
 */
export type EarlierRun =
  | { found: false; unavailable?: string }
  | { found: true; runId: string; status: 'COMPLETED'; outcome: ConversationOutcome }
  | BrokenRun;

/** What the new run does about what it found. */
export type LookBack =
  /** Nothing earlier, or the run it was started from: go on. */
  | { kind: 'go-on' }
  /** The conversation ended (or broke): refuse what came and leave a run that only keeps it readable. */
  | { kind: 'ended'; runId: string }
  /** The conversation closed idle (or a newer run than the one this run was started from did): continue from it. */
  | { kind: 'reopen'; runId: string };

export function lookBack(input: ConversationInput, earlier: EarlierRun): LookBack {
  if (!earlier.found) return { kind: 'go-on' };
  const { outcome } = earlier;
  if (!outcome) return { kind: 'ended', runId: earlier.runId };
  if (outcome.closedBecause === 'ended' || outcome.state.ended) return { kind: 'ended', runId: earlier.runId };
  if (earlier.runId === input.previousRunId) return { kind: 'go-on' };
  return { kind: 'reopen', runId: earlier.runId };
}

/**
 * The input of the run this one continues as: the earlier run's state and settings, plus the messages this run took
 * meanwhile (`received`, its own state) that the earlier run had not seen, in the order they came.
 */
export function continuedInput(
  input: ConversationInput,
  earlier: EarlierRun,
  received: ConversationState,
): ConversationInput {
  if (!earlier.found) throw new Error('continuedInput needs an earlier run');
  const { conversationId } = input;
  if (!earlier.outcome) {
    // No result to carry: the run keeps the conversation's length, so its transcript is read in the broken run.
    const state: ConversationState = {
      transcript: [],
      transcriptOffset: earlier.transcriptLength ?? 0,
      turns: earlier.turns ?? 0,
      queue: [],
      seenMessageIds: [],
      ...(earlier.lastResult ? { lastResult: earlier.lastResult } : {}),
      ended: true,
    };
    return {
      conversationId,
      ...(input.settings ? { settings: input.settings } : {}),
      state,
      previousRunId: earlier.runId,
    };
  }
  const { outcome } = earlier;
  const ended = outcome.closedBecause === 'ended' || outcome.state.ended === true;
  const settings = ended ? outcome.settings : (input.settings ?? outcome.settings);
  const closeWhenIdle = !ended && (input.closeWhenIdle ?? outcome.closeWhenIdle) === true;
  return {
    conversationId,
    ...(settings ? { settings } : {}),
    ...(closeWhenIdle ? { closeWhenIdle: true } : {}),
    state: ended ? { ...outcome.state, ended: true } : withMessages(outcome.state, received.queue),
    previousRunId: earlier.runId,
  };
}

/** `state` with `messages` queued after its own, leaving out those it has seen already. */
function withMessages(state: ConversationState, messages: readonly IncomingMessage[]): ConversationState {
  const seen = new Set(state.seenMessageIds);
  const fresh = messages.filter((message) => !seen.has(message.id));
  return {
    ...state,
    queue: [...state.queue, ...fresh],
    seenMessageIds: [...state.seenMessageIds, ...fresh.map((message) => message.id)],
  };
}
