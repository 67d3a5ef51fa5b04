import type { Client } from '@temporalio/client';
import type { ToolOutcome, UnavailableServer } from '../shared/types.js';
import type {
  ApprovalDecision,
  InputAnswer,
  InputRequest,
  PendingApproval,
  TurnResult,
} from '../workflows/definitions.js';
import type { StreamEvent } from '../workflows/stream-events.js';
import { AnswerText } from './answer-text.js';
import { subscribe, type SubscribeOptions } from './stream.js';

/**
 * One event of a turn as the chat shows it, from the conversation's event stream, with the answer's text already
 * applied by the stream's retry rule (see {@link AnswerText}). Every event names its turn.
 * @internal
 */
export type TurnEvent =
  /** A turn began answering the message `messageId` (sent by this chat or from elsewhere). */
  | { type: 'turn-started'; turn: number; messageId: string }
  /** A model call (round) began an attempt; `attempt > 1` is a retry. */
  | { type: 'model-call-started'; turn: number; round: number; attempt: number }
  /** Text as the model writes it: show `text` after the round's text, or instead of it when `replace` (a retry). */
  | { type: 'text'; turn: number; round: number; text: string; replace: boolean }
  /** MCP servers whose tools the turn goes without (they could not be listed). */
  | { type: 'servers-unavailable'; turn: number; servers: UnavailableServer[] }
  | { type: 'tool-started'; turn: number; toolCallId: string; name: string; arguments: string }
  | {
      type: 'tool-finished';
      turn: number;
      toolCallId: string;
      name: string;
      outcome: ToolOutcome;
      /** The start of the tool's result (or of the synthetic result's explanation). */
      content: string;
      durationMs: number;
    }
  /** A tool call waits for a person: ask, or show that it waits (it may be decided elsewhere). */
  | { type: 'approval-requested'; turn: number; approval: PendingApproval }
  | { type: 'approval-decided'; turn: number; decision: ApprovalDecision }
  /** An MCP server asks the person a question during a tool call. */
  | { type: 'input-requested'; turn: number; request: InputRequest }
  | { type: 'input-answered'; turn: number; answer: InputAnswer }
  | { type: 'turn-finished'; turn: number; result: TurnResult };

/**
 * Where the chat sees the conversation's turns as they happen.
 * @internal
 */
export interface TurnProgressSource {
  /**
   * The events of every turn of the conversation from the latest turn's start on, whoever sent its message, until
   * `signal` aborts or the conversation ends.
   */
  events(conversationId: string, options?: { signal?: AbortSignal }): AsyncIterable<TurnEvent>;
}

/**
 * The chat's progress source on the conversation's event stream: each model round, the answer's text as it is
 * written, tool calls as they start and finish, the result; one subscription for the whole session.
 * @internal
 */
export class StreamingProgressSource implements TurnProgressSource {
  constructor(
    private readonly client: Client,
    private readonly options: Pick<SubscribeOptions, 'waitMs' | 'maxRetryDelayMs'> = {},
  ) {}

  async *events(conversationId: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<TurnEvent> {
    // One per turn, so a long session does not keep the text of every turn it saw.
    let text = new AnswerText();
    for await (const event of subscribe(this.client, conversationId, { signal: options.signal, ...this.options })) {
      if (event.type === 'turn_started') text = new AnswerText();
      yield* turnEvents(event, text, conversationId);
    }
  }
}

/** What one stream event shows (a model attempt that starts with text is two events). */
function turnEvents(event: StreamEvent, text: AnswerText, conversationId: string): TurnEvent[] {
  const { turn } = event;
  switch (event.type) {
    case 'turn_started':
      return [{ type: 'turn-started', turn, messageId: event.messageId }];
    case 'model_attempt_started':
    case 'text_delta': {
      const shown: TurnEvent[] = [];
      if (event.type === 'model_attempt_started') {
        shown.push({ type: 'model-call-started', turn, round: event.round, attempt: event.attempt });
      }
      const change = text.apply(event);
      if (change) {
        shown.push({
          type: 'text',
          turn,
          round: change.round,
          text: change.text,
          replace: change.change === 'replace',
        });
      }
      return shown;
    }
    case 'servers_unavailable':
      return [{ type: 'servers-unavailable', turn, servers: event.servers }];
    case 'tool_call_started':
      return [
        { type: 'tool-started', turn, toolCallId: event.toolCallId, name: event.name, arguments: event.arguments },
      ];
    case 'tool_call_finished':
      return [
        {
          type: 'tool-finished',
          turn,
          toolCallId: event.toolCallId,
          name: event.name,
          outcome: event.outcome,
          content: event.preview,
          durationMs: event.durationMs,
        },
      ];
    case 'approval_requested': {
      const { type: _type, offset: _offset, ...approval } = event;
      return [{ type: 'approval-requested', turn, approval }];
    }
    case 'approval_decided': {
      const { type: _type, offset: _offset, ...decision } = event;
      return [{ type: 'approval-decided', turn, decision }];
    }
    case 'input_requested': {
      const { type: _type, offset: _offset, ...request } = event;
      return [{ type: 'input-requested', turn, request }];
    }
    case 'input_answered': {
      const { type: _type, offset: _offset, turn: _turn, answeredAt: _answeredAt, ...answer } = event;
      return [{ type: 'input-answered', turn, answer }];
    }
    case 'turn_finished': {
      const { type: _type, offset: _offset, ...result } = event;
      return [{ type: 'turn-finished', turn, result: { conversationId, ...result } }];
    }
  }
}
