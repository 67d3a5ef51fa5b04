import type { Client } from '@temporalio/client';
import type { ToolOutcome } from '../shared/types.js';
import type { TurnResult } from '../workflows/definitions.js';
import { AnswerText, subscribe, type SubscribeOptions } from './stream.js';

/**
 * One turn as the chat shows it: the turn that answers one message, from the conversation's event stream, with its
 * text already applied by the stream's retry rule (see {@link AnswerText}).
 * @internal
 */
export type TurnEvent =
  | { type: 'turn-started'; turn: number }
  /** A model call (round) began an attempt; `attempt > 1` is a retry. */
  | { type: 'model-call-started'; round: number; attempt: number }
  /** Text as the model writes it: show `text` after the round's text, or instead of it when `replace` (a retry). */
  | { type: 'text'; round: number; text: string; replace: boolean }
  | { type: 'tool-started'; toolCallId: string; name: string; arguments: string }
  | {
      type: 'tool-finished';
      toolCallId: string;
      name: string;
      outcome: ToolOutcome;
      /** The start of the tool's result (or of the synthetic result's explanation). */
      content: string;
      durationMs: number;
    }
  | { type: 'turn-finished'; result: TurnResult };

/**
 * Where the chat sees a turn's progress.
 * @internal
 */
export interface TurnProgressSource {
  /** The events of the turn that answers `messageId`, ending with `turn-finished` (or when `signal` aborts). */
  events(conversationId: string, messageId: string, options?: { signal?: AbortSignal }): AsyncIterable<TurnEvent>;
}

/**
 * The chat's progress source on the conversation's event stream: each model round, the answer's text as it is
 * written, tool calls as they start and finish, the result.
 * @internal
 */
export class StreamingProgressSource implements TurnProgressSource {
  constructor(
    private readonly client: Client,
    private readonly options: Pick<SubscribeOptions, 'waitMs'> = {},
  ) {}

  async *events(
    conversationId: string,
    messageId: string,
    options: { signal?: AbortSignal } = {},
  ): AsyncGenerator<TurnEvent> {
    const text = new AnswerText();
    let turn: number | undefined;
    for await (const event of subscribe(this.client, conversationId, { signal: options.signal, ...this.options })) {
      if (event.type === 'turn_started') {
        if (event.messageId === messageId) {
          turn = event.turn;
          yield { type: 'turn-started', turn };
        }
        continue;
      }
      if (event.turn !== turn) continue;
      switch (event.type) {
        case 'model_attempt_started':
        case 'text_delta': {
          if (event.type === 'model_attempt_started') {
            yield { type: 'model-call-started', round: event.round, attempt: event.attempt };
          }
          const change = text.apply(event);
          if (change) {
            yield { type: 'text', round: change.round, text: change.text, replace: change.change === 'replace' };
          }
          break;
        }
        case 'tool_call_started':
          yield { type: 'tool-started', toolCallId: event.toolCallId, name: event.name, arguments: event.arguments };
          break;
        case 'tool_call_finished':
          yield {
            type: 'tool-finished',
            toolCallId: event.toolCallId,
            name: event.name,
            outcome: event.outcome,
            content: event.preview,
            durationMs: event.durationMs,
          };
          break;
        case 'turn_finished': {
          const { type: _type, offset: _offset, ...result } = event;
          yield { type: 'turn-finished', result: { conversationId, ...result } };
          return;
        }
      }
    }
  }
}
