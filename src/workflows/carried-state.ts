import { DurableAgentError } from '../shared/errors.js';
import type { ConversationState } from './definitions.js';

/**
 * The format runs write the carried state in (`ConversationState.formatVersion`). Release 0.1.0 wrote none: that is
 * format 1. Bump it when the state's shape changes, and add the step that reads the previous format to
 * {@link upgrades}: a run may be handed a state written by any earlier release (a conversation idle for months, or one
 * moving to a new Worker Deployment Version), and must read it.
 *
 * - 1: release 0.1.0.
 * - 2: adds `formatVersion` (so that later changes can be told apart); otherwise as 1.
 * - 3: adds `cost`, what the conversation has spent (a state of format 2 has spent nothing that was priced).
 * - 4: adds `contextWindow`, and summaries in the transcript (system messages with `compaction`, whose model view
 *   replaces older messages): an older worker would send the model the whole transcript again. A state of format 3
 *   has neither.
 */
export const CARRIED_STATE_FORMAT = 4;

/** Each step reads a state of format `n` and returns it in format `n + 1`. */
const upgrades: Record<number, (state: ConversationState) => ConversationState> = {
  1: (state) => ({ ...state, formatVersion: 2 }),
  2: (state) => ({ ...state, formatVersion: 3 }),
  3: (state) => ({ ...state, formatVersion: 4 }),
};

/** A carried state in a format this code does not know: written by a newer release. */
export class CarriedStateFormatError extends DurableAgentError {}

/**
 * A carried state of any format up to {@link CARRIED_STATE_FORMAT}, in the current format. A newer format (a newer
 * release's state reached an older worker, e.g. after a rollback) throws: that fails the workflow task, which Temporal
 * retries, instead of misreading a conversation; a worker of the newer release reads it.
 */
export function readCarriedState(state: ConversationState): ConversationState;
export function readCarriedState(state: ConversationState | undefined): ConversationState | undefined;
export function readCarriedState(state: ConversationState | undefined): ConversationState | undefined {
  if (state === undefined) return undefined;
  let format = state.formatVersion ?? 1;
  if (!Number.isInteger(format) || format < 1 || format > CARRIED_STATE_FORMAT) {
    throw new CarriedStateFormatError(
      `The carried conversation state has format ${JSON.stringify(state.formatVersion)}; this release reads formats 1 ` +
        `to ${CARRIED_STATE_FORMAT}. Run a worker of the release that wrote it (or a newer one).`,
    );
  }
  let current = state;
  while (format < CARRIED_STATE_FORMAT) {
    current = upgrades[format]!(current);
    format++;
  }
  return current;
}
