import { setTimeout as sleep } from 'node:timers/promises';
import type { ToolOutcome } from '../shared/types.js';
import type { ConversationStatus, TurnResult } from '../workflows/definitions.js';
import type { ConversationTranscriptPage } from './transcript.js';

/** What happens during one turn, as a client can show it. */
export type TurnEvent =
  | { type: 'turn-started'; turn: number }
  /** The turn's current activity changed, e.g. `model · round 2`, `tools · crm__find_user`, `thinking`. */
  | { type: 'activity'; activity: string }
  | { type: 'tool-started'; toolCallId: string; name: string; arguments: string }
  | {
      type: 'tool-finished';
      toolCallId: string;
      name: string;
      outcome: ToolOutcome;
      /** The tool's result (or the synthetic result's explanation). */
      content: string;
      /** As observed by the source; `undefined` when the call started and finished between two observations. */
      durationMs: number | undefined;
    }
  /** `result` is missing when the source only saw that a later turn began. */
  | { type: 'turn-finished'; result: TurnResult | undefined };

export interface FollowOptions {
  /** Whole-conversation index from which to look for the turn's messages; default the current run's first. */
  from?: number;
  signal?: AbortSignal;
}

/**
 * A source of a turn's progress. Today's implementation follows the conversation's status and transcript by polling;
 * a streaming source (server-pushed events) can replace it behind the same interface.
 */
export interface TurnProgressSource {
  /** The events of the turn that answers `messageId`, ending with `turn-finished` (or when `signal` aborts). */
  follow(conversationId: string, messageId: string, options?: FollowOptions): AsyncIterable<TurnEvent>;
}

/** The part of `DurableAgentClient` the polling source reads. */
export interface ConversationReader {
  status(conversationId: string): Promise<ConversationStatus>;
  transcript(conversationId: string, options: { from?: number; limit?: number }): Promise<ConversationTranscriptPage>;
}

/** Default interval between two looks at a running turn. */
export const DEFAULT_PROGRESS_POLL_MS = 250;

/**
 * Follows a turn by polling the `status` query (current activity, the last result) and reading the transcript's new
 * messages: an assistant message with tool calls means they started; their tool messages mean they finished. Parallel
 * tool calls are written to the transcript together, so their finishing times are those of the slowest.
 */
export class PollingProgressSource implements TurnProgressSource {
  constructor(
    private readonly reader: ConversationReader,
    private readonly intervalMs = DEFAULT_PROGRESS_POLL_MS,
  ) {}

  async *follow(conversationId: string, messageId: string, options: FollowOptions = {}): AsyncGenerator<TurnEvent> {
    const { signal } = options;
    let cursor = options.from;
    let ours = false;
    let over = false;
    let turnAnnounced = false;
    let activity: string | undefined;
    let observation = 0;
    const open = new Map<string, { seenAt: number; observation: number }>();

    while (!signal?.aborted) {
      observation++;
      let status: ConversationStatus | undefined;
      try {
        status = await this.reader.status(conversationId);
      } catch {
        // Not created yet, or between two runs (continue-as-new): look again.
      }
      if (status !== undefined) {
        cursor ??= status.transcriptOffset;
        const current = status.currentTurn;
        if (current?.messageId === messageId) {
          if (!turnAnnounced) {
            turnAnnounced = true;
            yield { type: 'turn-started', turn: current.turn };
          }
          if (current.activity !== activity) {
            activity = current.activity;
            yield { type: 'activity', activity };
          }
        }
        while (status.transcriptLength > cursor && !over) {
          const page = await this.reader.transcript(conversationId, { from: cursor, limit: 200 });
          if (page.messages.length === 0) break;
          cursor = page.from + page.messages.length;
          for (const message of page.messages) {
            if (!ours) {
              ours = message.role === 'user' && message.id === messageId;
              if (ours && !turnAnnounced) {
                turnAnnounced = true;
                yield { type: 'turn-started', turn: status.currentTurn?.turn ?? status.turns };
              }
              continue;
            }
            if (message.role === 'user') {
              over = true;
              break;
            }
            if (message.role === 'assistant') {
              for (const call of message.toolCalls ?? []) {
                open.set(call.id, { seenAt: Date.now(), observation });
                yield { type: 'tool-started', toolCallId: call.id, name: call.name, arguments: call.arguments };
              }
            } else if (message.role === 'tool') {
              const started = open.get(message.toolCallId);
              open.delete(message.toolCallId);
              yield {
                type: 'tool-finished',
                toolCallId: message.toolCallId,
                name: message.name,
                outcome: message.outcome,
                content: message.content,
                durationMs: started && started.observation !== observation ? Date.now() - started.seenAt : undefined,
              };
            }
          }
        }
        if (status.lastResult?.messageId === messageId) {
          if (!turnAnnounced) yield { type: 'turn-started', turn: status.lastResult.turn };
          yield { type: 'turn-finished', result: status.lastResult };
          return;
        }
        if (over) {
          yield { type: 'turn-finished', result: undefined };
          return;
        }
      }
      try {
        await sleep(this.intervalMs, undefined, { signal });
      } catch {
        return;
      }
    }
  }
}
