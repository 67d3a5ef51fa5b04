import type { ToolDefinition, TurnSetup } from '../shared/types.js';
import type { Transcript } from './transcript.js';

// Each byte once in history (docs/architecture.md, "Each byte once in history"): a tool result is recorded as its
// callTool activity's result, and the tool list by the first turn that lists it; the model calls after that name them
// instead of carrying them again. No patch: this changes the inputs of the calls a workflow schedules, never which calls
// it schedules, and replay compares the calls (their types and ids), not their inputs; release 0.1.0's histories
// replay on it (test/replay). A patch would also cost every run a search-attribute upsert (sdk-core records the
// patch in `TemporalChangeVersion`), a visibility write and a billable action, for nothing replay needs.

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
  transcript.markRecorded(transcript.length);
}

/** The list a turn's listing may name instead of recording it again: the one the conversation recorded last. */
export function knownToolList(recorded: RecordedTools | undefined): RecordedTools | undefined {
  return recorded;
}

/**
 * The tools a turn's listing found: those it recorded, or the known list it named by digest. A listing named only
 * what the call said it knew, so `known` is there whenever `tools` is not.
 */
export function listedTools(setup: TurnSetup, known: RecordedTools | undefined): ToolDefinition[] {
  if (setup.tools !== undefined) return setup.tools;
  return setup.toolsDigest !== undefined && setup.toolsDigest === known?.digest ? known.tools : [];
}
