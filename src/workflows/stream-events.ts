import type { TokenUsage, ToolCall, ToolMessage, ToolOutcome, UnavailableServer } from '../shared/types.js';
import type { ApprovalDecision, PendingApproval } from '../shared/approval-messages.js';
import type { InputAnswer, InputRequest } from '../shared/input-messages.js';
import type { StopReason, TurnResult } from './turn-result.js';

/**
 * A conversation's event stream: what subscribers (the CLI, the programmatic client, the HTTP bridge) see of a turn
 * as it happens. Plain JSON. The model activity publishes text by signalling its own workflow run in batches; the
 * workflow appends the turn and tool events itself. Subscribers read with the long-poll `pollEvents` update.
 * See docs/streaming.md.
 */

/** The turn began answering the user message `messageId`. */
export interface TurnStartedEvent {
  type: 'turn_started';
  turn: number;
  messageId: string;
}

/**
 * A model call (round) began an attempt. A retried call starts a new attempt: consumers REPLACE the text shown for
 * that round with what the new attempt writes, so a retry after a failure in the middle of a stream never shows the
 * same text twice.
 */
export interface ModelAttemptStartedEvent {
  type: 'model_attempt_started';
  turn: number;
  round: number;
  attempt: number;
}

/** Text the model wrote, in the order it wrote it; append to the text of (round, attempt). */
export interface TextDeltaEvent {
  type: 'text_delta';
  turn: number;
  round: number;
  attempt: number;
  text: string;
}

/**
 * The turn's first model call could not list these MCP servers: the turn goes on without their tools (the model is
 * not offered them). Comes after that call's `model_attempt_started`; the turn's result names them again.
 */
export interface ServersUnavailableEvent {
  type: 'servers_unavailable';
  turn: number;
  servers: UnavailableServer[];
}

export interface ToolCallStartedEvent {
  type: 'tool_call_started';
  turn: number;
  toolCallId: string;
  name: string;
  /** The arguments' JSON text, cut to {@link MAX_ARGUMENTS_PREVIEW_CHARS}. */
  arguments: string;
}

export interface ToolCallFinishedEvent {
  type: 'tool_call_finished';
  turn: number;
  toolCallId: string;
  name: string;
  outcome: ToolOutcome;
  /** The start of the result, cut to {@link MAX_RESULT_PREVIEW_CHARS}. */
  preview: string;
  /** Workflow time from dispatch to result (0 for a call that was rejected without running). */
  durationMs: number;
}

/** A tool call waits for a person's decision (see `PendingApproval`). */
export interface ApprovalRequestedEvent extends PendingApproval {
  type: 'approval_requested';
}

/** A pending tool call was decided, by a person, a timeout or an interrupt (see `ApprovalDecision`). */
export interface ApprovalDecidedEvent extends ApprovalDecision {
  type: 'approval_decided';
}

/** An MCP server asked the person a question during a tool call (see `InputRequest`). */
export interface InputRequestedEvent extends InputRequest {
  type: 'input_requested';
}

/** The question was answered (or cancelled by its timeout or an interrupt). */
export interface InputAnsweredEvent extends InputAnswer {
  type: 'input_answered';
  turn: number;
  /** @format date-time */
  answeredAt: string;
}

/** The turn's result, as the `ask` update returns it (without `conversationId`). */
export interface TurnFinishedEvent extends Omit<TurnResult, 'conversationId'> {
  type: 'turn_finished';
  turn: number;
  stopReason: StopReason;
  usage: TokenUsage;
  answer: string | null;
}

export type StreamEventBody =
  | TurnStartedEvent
  | ModelAttemptStartedEvent
  | TextDeltaEvent
  | ServersUnavailableEvent
  | ToolCallStartedEvent
  | ToolCallFinishedEvent
  | ApprovalRequestedEvent
  | ApprovalDecidedEvent
  | InputRequestedEvent
  | InputAnsweredEvent
  | TurnFinishedEvent;

/** An event with its offset: monotonic per conversation, carried across continue-as-new and reopening. */
export type StreamEvent = StreamEventBody & { offset: number };

export type StreamEventType = StreamEvent['type'];

/**
 * What the model activity signals: text of one attempt of one model call. The first batch of an attempt after the
 * first (a retry) is sent at once, even empty, so subscribers learn of the new attempt before its text.
 */
export interface StreamBatch {
  turn: number;
  round: number;
  attempt: number;
  text: string;
}

export interface PollEventsRequest {
  /** Offset of the first event wanted. Default (or older than what the workflow keeps): the latest turn's start. */
  from?: number;
  /** Longest wait for an event, in milliseconds; default {@link DEFAULT_POLL_WAIT_MS}, at most {@link MAX_POLL_WAIT_MS}. */
  waitMs?: number;
}

export interface PollEventsResult {
  events: StreamEvent[];
  /** The `from` of the next poll. */
  next: number;
  /** True when events between `from` and the first returned one were truncated (turns older than the previous one). */
  truncated: boolean;
  /** True when this run is about to close or continue as new: poll the conversation's latest run next. */
  closing: boolean;
}

/** Turn streaming on by default: measured at about 2× a non-streamed turn's history bytes (docs/streaming.md). */
export const DEFAULT_STREAM = true;
export const DEFAULT_POLL_WAIT_MS = 30_000;
export const MAX_POLL_WAIT_MS = 60_000;
/**
 * Polls that may wait at once in one run. Temporal allows 10 updates in flight per workflow; the rest stay free for
 * `ask`. A bridge holds one poll per conversation however many browsers watch it.
 */
export const MAX_WAITING_POLLS = 5;
/** Most characters of events one poll returns: well under the 2 MiB payload limit. */
export const MAX_POLL_RESULT_CHARS = 256 * 1024;
/**
 * Most characters of JSON of the events carried into the next run (continue-as-new, or reopening after
 * an idle close), so a subscriber that was between two polls misses nothing; over it, the text is left out.
 */
export const MAX_CARRIED_EVENTS_CHARS = 64 * 1024;
export const MAX_ARGUMENTS_PREVIEW_CHARS = 200;
export const MAX_RESULT_PREVIEW_CHARS = 200;

/** Failure types of the event stream. */
export const StreamFailureType = {
  /** `pollEvents` refused: {@link MAX_WAITING_POLLS} polls are waiting already. Share one subscription. */
  TooManySubscribers: 'TooManySubscribers',
  InvalidPoll: 'InvalidPoll',
} as const;

/** Cut `text` to `max` characters, marking the cut. */
export function preview(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The events a run keeps: the current turn's and the previous turn's (older turns are truncated when a turn starts).
 * Pure and deterministic, so replay rebuilds it from the same signals and decisions.
 */
export class EventLog {
  private events: StreamEvent[] = [];
  private offset: number;
  /**
   * The model call whose text is accepted, its latest attempt and that attempt's text so far; batches of anything
   * else are late and dropped.
   */
  private open: { turn: number; round: number; attempt: number; text: string } | undefined;

  constructor(nextOffset = 0, carried: readonly StreamEvent[] = []) {
    this.offset = nextOffset;
    this.events = carried.filter((event) => event.offset < nextOffset);
  }

  /** The offset the next event gets. */
  get nextOffset(): number {
    return this.offset;
  }

  append(body: StreamEventBody): StreamEvent {
    const event: StreamEvent = { ...body, offset: this.offset++ };
    this.events.push(event);
    return event;
  }

  /** A turn starts: drop the events of turns before the previous one, then append `turn_started`. */
  startTurn(turn: number, messageId: string): void {
    this.events = this.events.filter((event) => event.turn >= turn - 1);
    this.append({ type: 'turn_started', turn, messageId });
  }

  /** The workflow schedules a model call: its first attempt starts. */
  startModelCall(turn: number, round: number): void {
    this.open = { turn, round, attempt: 1, text: '' };
    this.append({ type: 'model_attempt_started', turn, round, attempt: 1 });
  }

  /**
   * The model call returned (or failed for good): text signalled after this is late. With the answer's `content`
   * (a streamed call that succeeded), the part subscribers have not seen is appended: the activity does not signal
   * its last batch. If the content does not continue the latest attempt's text (a retry whose batches were lost), it
   * is written whole as a new attempt, which replaces the earlier text.
   */
  finishModelCall(content?: string | null): void {
    const open = this.open;
    this.open = undefined;
    if (!open || !content) return;
    const { turn, round } = open;
    if (content.startsWith(open.text)) {
      const rest = content.slice(open.text.length);
      if (rest !== '') this.append({ type: 'text_delta', turn, round, attempt: open.attempt, text: rest });
      return;
    }
    const attempt = open.attempt + 1;
    this.append({ type: 'model_attempt_started', turn, round, attempt });
    this.append({ type: 'text_delta', turn, round, attempt, text: content });
  }

  /** The turn is about to run (or reject) a tool call the model asked for. */
  startToolCall(turn: number, call: ToolCall): void {
    this.append({
      type: 'tool_call_started',
      turn,
      toolCallId: call.id,
      name: call.name,
      arguments: preview(call.arguments, MAX_ARGUMENTS_PREVIEW_CHARS),
    });
  }

  /** A tool call has its message: the tool's result, or one the turn wrote (rejected, cancelled, over budget). */
  finishToolCall(turn: number, message: ToolMessage, durationMs: number): void {
    this.append({
      type: 'tool_call_finished',
      turn,
      toolCallId: message.toolCallId,
      name: message.name,
      outcome: message.outcome,
      preview: preview(message.content, MAX_RESULT_PREVIEW_CHARS),
      durationMs,
    });
  }

  /** Append a batch the model activity signalled; returns false for a late one (an older attempt, a finished call). */
  acceptBatch(batch: StreamBatch): boolean {
    const open = this.open;
    if (!open || batch.turn !== open.turn || batch.round !== open.round || batch.attempt < open.attempt) return false;
    const { turn, round, attempt } = batch;
    if (attempt > open.attempt) {
      open.attempt = attempt;
      open.text = '';
      this.append({ type: 'model_attempt_started', turn, round, attempt });
    }
    if (batch.text !== '') {
      open.text += batch.text;
      this.append({ type: 'text_delta', turn, round, attempt, text: batch.text });
    }
    return true;
  }

  /** Where a poll starts: `from`, or the latest turn's start when `from` is missing or older than what is kept. */
  resolve(from: number | undefined): { start: number; truncated: boolean } {
    const first = this.events[0]?.offset ?? this.offset;
    if (from !== undefined && from >= first) return { start: Math.min(from, this.offset), truncated: false };
    const latestStart = this.events.findLast((event) => event.type === 'turn_started')?.offset ?? this.offset;
    return { start: latestStart, truncated: from !== undefined && from > 0 && from < first };
  }

  hasFrom(start: number): boolean {
    return this.offset > start;
  }

  /**
   * The events kept (the latest turn's and the one before), for the next run: a subscriber polling between the two
   * runs resumes where it was, and a late one still gets the latest turn. Over {@link MAX_CARRIED_EVENTS_CHARS} the
   * text deltas are left out (each answer is in its `turn_finished`), then everything but the turns' starts and ends.
   */
  carried(): StreamEvent[] {
    let events = this.events;
    const size = () => JSON.stringify(events).length;
    if (size() > MAX_CARRIED_EVENTS_CHARS) events = events.filter((event) => event.type !== 'text_delta');
    if (size() > MAX_CARRIED_EVENTS_CHARS) {
      events = events.filter((event) => event.type === 'turn_started' || event.type === 'turn_finished');
    }
    return [...events];
  }

  /** Events from `start`, up to {@link MAX_POLL_RESULT_CHARS} characters of JSON (always at least one). */
  read(start: number): { events: StreamEvent[]; next: number } {
    const index = this.events.findIndex((event) => event.offset >= start);
    if (index < 0) return { events: [], next: Math.max(start, this.offset) };
    const events: StreamEvent[] = [];
    let chars = 0;
    for (const event of this.events.slice(index)) {
      chars += JSON.stringify(event).length;
      if (chars > MAX_POLL_RESULT_CHARS && events.length > 0) break;
      events.push(event);
    }
    const last = events.at(-1);
    return { events, next: last ? last.offset + 1 : start };
  }
}
