import { patched } from '@temporalio/workflow';
import type { ToolDefinition, TurnSetup } from '../shared/types.js';
import type { Transcript } from './transcript.js';

// Each byte once in history (docs/architecture.md, "Each byte once in history"): a tool result is recorded as its callTool activity's
// result, and the tool list by the first turn that lists it; the model calls after that name them instead of
// carrying them again. Behind patches: release 0.1.0's turns carried both, and replay must schedule the same calls.

/** The patch after which a round's tool results join the next model call's prefix instead of its new messages. */
export const TOOL_RESULTS_ONCE_PATCH = 'tool-results-once';

/** The patch after which a turn's listing names the tool list by digest when it is the one recorded last. */
export const TOOL_LIST_ONCE_PATCH = 'tool-list-once';

/** A tool list the conversation recorded, and its digest. */
export interface RecordedTools {
  tools: ToolDefinition[];
  digest: string;
}

/**
 * A round's tool messages were just appended: they are in history already (each call's activity result), so the next
 * model call names them by position and digest. The worker that ran the calls holds them; any other reads them by
 * query (src/worker/activities/model/transcript-cache.ts).
 */
export function nameToolResults(transcript: Transcript): void {
  if (patched(TOOL_RESULTS_ONCE_PATCH)) transcript.markRecorded(transcript.length);
}

/** The list a turn's listing may name instead of recording it again: the one the conversation recorded last. */
export function knownToolList(recorded: RecordedTools | undefined): RecordedTools | undefined {
  // Asked only when there is one, so a conversation's first turn records no marker and replays as it always did.
  return recorded !== undefined && patched(TOOL_LIST_ONCE_PATCH) ? recorded : undefined;
}

/**
 * The tools a turn's listing found: those it recorded, or the known list it named by digest. A listing named only
 * what the call said it knew, so `known` is there whenever `tools` is not.
 */
export function listedTools(setup: TurnSetup, known: RecordedTools | undefined): ToolDefinition[] {
  if (setup.tools !== undefined) return setup.tools;
  return setup.toolsDigest !== undefined && setup.toolsDigest === known?.digest ? known.tools : [];
}
