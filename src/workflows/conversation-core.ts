import { expectedFailure, FailureType } from '../shared/errors.js';
import type { ChatMessage, ModelContextPage, ToolDefinition } from '../shared/types.js';
import { Approvals } from './approvals.js';
import { CARRIED_STATE_FORMAT, readCarriedState } from './carried-state.js';
import { CostLedger } from './cost-budget.js';
import { carriedResults, page, RecentIds, validateMessage } from './conversation-state.js';
import { carriedForNextRun } from './carried-transcript.js';
import { ContextWindow } from './context-window.js';
import type {
  ConversationInput,
  ConversationOutcome,
  ConversationPhase,
  ConversationSettings,
  ConversationState,
  ConversationStatus,
  IncomingMessage,
  TranscriptPage,
} from './definitions.js';
import { InputRequests } from './input-requests.js';
import { EventLog, type TurnFinishedEvent } from './stream-events.js';
import { Transcript } from './transcript.js';
import { observeTurn, type RunningTurn } from './running-turn.js';
import type { TurnContext } from './turn.js';
import type { TurnResult } from './turn-result.js';

export const DEFAULT_MAX_TURNS_PER_RUN = 100;
/** Results of recent turns kept for asks that are retried after their turn finished. */
export const RECENT_RESULTS = 20;
/** What the conversation needs from its workflow, kept narrow so that unit tests run it without Temporal. */
export interface ConversationHooks {
  /** Temporal suggests continuing as new (`workflowInfo().continueAsNewSuggested`). */
  continueAsNewSuggested(): boolean;
  /** Something the Web UI's current details show changed: the queue, the phase or the running turn's progress. */
  changed(): void;
  /** A message was ignored; the workflow logs why. */
  warn(message: string, attributes: Record<string, unknown>): void;
  /** Tool calls started or stopped waiting for a person: the phase may have changed (default: `changed`). */
  approvalsChanged?(): void;
  /** A question from an MCP server came or was answered: the phase may have changed (the workflow publishes it). */
  inputsChanged?(): void;
  /**
   * Whether a `skipIfBusy` message may be dropped (the workflow: `patched('skip-if-busy')`, so a history in which an
   * older release queued such a message replays as it ran); default yes.
   */
  mayDropBusyMessage?(): boolean;
}

/** What the conversation hands a turn: everything in its context but the workflow's ids. */
export type ConversationTurn = Omit<TurnContext, 'workflowId' | 'runId'>;

/**
 * One run of a conversation, without Temporal: the queue of user messages, their deduplication, the results of
 * recent turns, the phase and status, the transcript pages the queries answer with, and the state carried to the next
 * run. The workflow turns signals, updates and queries into calls of these methods and runs the turns.
 */
export class ConversationCore {
  readonly conversationId: string;
  readonly settings: ConversationSettings;
  readonly transcript: Transcript;
  /** The event stream subscribers poll (docs/streaming.md). */
  readonly events: EventLog;
  /** Tool calls that wait for a person, and their decisions (docs/approvals.md). */
  readonly approvals: Approvals;
  /** Questions from MCP servers waiting for the person (./input-requests.ts). */
  readonly inputs: InputRequests;
  private readonly transcriptOffset: number;
  private readonly previousRunId: string | undefined;
  private readonly closeWhenIdle: boolean;
  private turns: number;
  private turnsThisRun = 0;
  private readonly queue: IncomingMessage[] = [];
  private readonly seen: RecentIds;
  private readonly recentResults: TurnResult[] = [];
  private lastResult: TurnResult | undefined;
  private ending = false;
  /** The run is handing over to the next (continue-as-new): new asks are refused until the next run takes them. */
  private handingOver = false;
  private current: RunningTurn | undefined;
  /** Messages whose `ask` update waits for an answer from this run. */
  private readonly waitingAsks = new Set<string>();
  private tools: ToolDefinition[] | undefined;
  private historyFull = false;
  private toolsDigest: string | undefined;
  /** What the conversation's model calls cost, carried from run to run (docs/cost.md). */
  private readonly costs: CostLedger;
  /** What the conversation knows of its model's window, carried from run to run (./compaction.ts). */
  private readonly contextWindow: ContextWindow;

  constructor(
    input: ConversationInput,
    private readonly hooks: ConversationHooks,
  ) {
    const carried = readCarriedState(input.state);
    this.conversationId = input.conversationId;
    this.settings = input.settings ?? {};
    this.previousRunId = input.previousRunId;
    this.closeWhenIdle = input.closeWhenIdle === true;
    // A run started from an ended conversation's state (see earlier-runs.ts) only keeps it readable.
    this.ending = carried?.ended === true;
    const systemPrompt = this.settings.systemPrompt;
    const initial: ChatMessage[] =
      carried?.transcript ?? (systemPrompt ? [{ role: 'system', content: systemPrompt }] : []);
    this.transcript = new Transcript(initial, carried !== undefined);
    this.transcriptOffset = carried?.transcriptOffset ?? 0;
    this.turns = carried?.turns ?? 0;
    this.seen = new RecentIds(carried?.seenMessageIds ?? []);
    this.lastResult = carried?.lastResult;
    this.costs = new CostLedger(carried?.cost);
    this.contextWindow = new ContextWindow(this.settings, carried?.contextWindow, this.transcriptOffset);
    this.recentResults.push(...(carried?.recentResults ?? []));
    this.events = new EventLog(carried?.streamOffset ?? 0, carried?.streamEvents);
    this.approvals = new Approvals(carried?.allowedTools, this.events, hooks);
    this.inputs = new InputRequests(this.events, () => (hooks.inputsChanged ?? hooks.changed)());
    // Carried messages were seen (and remembered) by the previous run already.
    this.queue.push(...(carried?.queue ?? []));
    for (const message of input.messages ?? []) this.enqueue(message);
  }

  get phase(): ConversationPhase {
    if (!this.current) return this.ending ? 'ended' : 'idle';
    if (this.inputs.waiting) return 'awaiting_input';
    return this.approvals.pending.length > 0 ? 'awaiting_approval' : 'running';
  }

  /** The `end` signal came: no new messages; the run closes after the current turn. */
  get ended(): boolean {
    return this.ending;
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Continue as new: Temporal suggests it, this run answered `maxTurnsPerRun` turns, or its history is full. */
  get rollingOver(): boolean {
    const maxTurns = this.settings.maxTurnsPerRun ?? DEFAULT_MAX_TURNS_PER_RUN;
    return this.hooks.continueAsNewSuggested() || this.turnsThisRun >= maxTurns || this.historyFull;
  }

  /** This run's history passed its share of Temporal's limits (./run-size.ts): roll over before the next turn. */
  historyPassedShare(): void {
    this.historyFull = true;
  }

  /** The main loop has something to do: a message, the end, or a rollover. */
  get hasWork(): boolean {
    return this.queue.length > 0 || this.ending || this.rollingOver;
  }

  /**
   * A queued message has an `ask` waiting for it that this run answers before it rolls over (asks that came while the
   * rollover was due are not counted: their messages go to the next run).
   */
  get asksWaiting(): boolean {
    return this.queue.some((queued) => this.waitingAsks.has(queued.id));
  }

  /** The `userMessage` signal: queue the message unless it is invalid, a duplicate, or the conversation ended. */
  receive(message: IncomingMessage): void {
    try {
      validateMessage(message, this.settings);
    } catch (error) {
      this.hooks.warn('ignored an invalid userMessage signal', { error: String(error) });
      return;
    }
    if (this.ending) {
      this.hooks.warn('ignored a message sent after the conversation ended', { messageId: message.id });
      return;
    }
    if (this.dropsWhileBusy(message)) return;
    if (this.enqueue(message)) this.hooks.changed();
  }

  /**
   * A `skipIfBusy` message that finds a turn running or a message waiting is dropped, and remembered as seen: the same
   * message sent again (a retried firing) is still the one message, and still dropped.
   */
  private dropsWhileBusy(message: IncomingMessage): boolean {
    if (message.skipIfBusy !== true || this.seen.has(message.id)) return false;
    if (this.current === undefined && this.queue.length === 0) return false;
    if (this.hooks.mayDropBusyMessage?.() === false) return false;
    this.seen.add(message.id);
    this.hooks.warn('skipped a message sent with skipIfBusy: a turn is running or a message waits', {
      messageId: message.id,
      runningTurn: this.current?.turn,
      queued: this.queue.length,
    });
    return true;
  }

  /** The `ask` update's validator: rejects bad input, and new asks while ending or handing over to the next run. */
  validateAsk(message: IncomingMessage): void {
    validateMessage(message, this.settings);
    if (this.ending) {
      throw expectedFailure({
        type: FailureType.ConversationEnded,
        nonRetryable: true,
        message: `Conversation ${this.conversationId} has ended; start a new conversation to continue.`,
      });
    }
    if (this.handingOver && this.resultOf(message.id) === undefined) {
      throw expectedFailure({
        type: FailureType.ConversationRollingOver,
        message: `Conversation ${this.conversationId} is continuing as new; ask again (same message id) in a moment.`,
      });
    }
  }

  /**
   * The `ask` update: the earlier result of a retried ask, or queue the message and wait for its turn's result.
   * An ask that comes while the rollover is due is not answered by this run: its message is carried to the next run
   * (keeping its place in the queue) and the ask fails with `ConversationRollingOver` when this run hands over, so
   * the client asks again, with the same id, and the next run answers it. Steady asks cannot postpone the rollover.
   * `wait` resolves once its argument holds (the workflow passes Temporal's `condition`).
   */
  async ask(message: IncomingMessage, wait: (settled: () => boolean) => Promise<void>): Promise<TurnResult> {
    const earlier = this.resultOf(message.id);
    if (earlier) return earlier;
    const pending = this.current?.messageId === message.id || this.queue.some((queued) => queued.id === message.id);
    if (this.seen.has(message.id) && !pending) {
      throw expectedFailure({
        type: FailureType.InvalidMessage,
        nonRetryable: true,
        message: `Message ${message.id} was answered long ago and its result is no longer kept; send it with a new id.`,
      });
    }
    this.enqueue(message);
    this.hooks.changed();
    const answeredHere = !this.rollingOver;
    if (answeredHere) this.waitingAsks.add(message.id);
    try {
      await wait(() => this.resultOf(message.id) !== undefined || this.phase === 'ended' || this.handingOver);
    } finally {
      this.waitingAsks.delete(message.id);
    }
    const result = this.resultOf(message.id);
    if (result) return result;
    if (this.phase === 'ended') {
      throw expectedFailure({
        type: FailureType.ConversationEnded,
        nonRetryable: true,
        message: `Conversation ${this.conversationId} ended before message ${message.id} was answered.`,
      });
    }
    throw expectedFailure({
      type: FailureType.ConversationRollingOver,
      message:
        `Conversation ${this.conversationId} continued as new before message ${message.id} was answered; the ` +
        'message was carried over: ask again with the same id to get its answer.',
    });
  }

  /**
   * The run hands over to the next (continue-as-new): asks that still wait fail with `ConversationRollingOver` (their
   * messages are carried), and new ones are refused until the next run takes them.
   */
  handOver(): void {
    this.handingOver = true;
    this.hooks.changed();
  }

  /** The `interrupt` signal: cancel the running turn, if there is one. */
  interrupt(reason: string | undefined): void {
    if (!this.current) return;
    this.inputs.cancelAll('interrupt');
    this.current.interrupted = true;
    this.current.reason = reason;
    this.current.cancel();
  }

  /** The running turn's number, if a turn runs. */
  get runningTurn(): number | undefined {
    return this.current?.turn;
  }

  /** The `end` signal. */
  end(): void {
    this.ending = true;
    this.hooks.changed();
  }

  status(): ConversationStatus {
    const status: ConversationStatus = {
      conversationId: this.conversationId,
      phase: this.phase,
      turns: this.turns,
      queued: this.queue.length,
      transcriptLength: this.transcriptOffset + this.transcript.length,
      transcriptOffset: this.transcriptOffset,
      cost: this.costs.total,
      ...(this.lastResult ? { lastResult: this.lastResult } : {}),
    };
    if (this.approvals.pending.length > 0) status.pendingApprovals = this.approvals.pending;
    if (this.inputs.waiting) status.pendingInputs = this.inputs.list();
    if (this.current?.progress) {
      const { spend, activity } = this.current.progress;
      status.currentTurn = {
        turn: this.current.turn,
        messageId: this.current.messageId,
        rounds: spend.rounds,
        toolCalls: spend.toolCalls,
        usage: spend.usage,
        ...(spend.cost ? { cost: spend.cost } : {}),
        startedAt: new Date(spend.startedAt).toISOString(),
        activity,
      };
    }
    return status;
  }

  /** The `transcript` query: a page of the whole conversation's transcript, as far as this run holds it. */
  transcriptPage(request: { from?: number; limit?: number } | undefined): TranscriptPage {
    const offset = this.transcriptOffset;
    const from = Math.max(offset, request?.from ?? offset);
    const limit = Math.max(1, Math.min(request?.limit ?? 200, 1000));
    return {
      from,
      messages: page(this.transcript.messages, from - offset, limit),
      total: offset + this.transcript.length,
      offset,
      ...(this.previousRunId ? { previousRunId: this.previousRunId } : {}),
    };
  }

  /** The `modelContext` query: a page of this run's transcript (run-relative indexes) and the current turn's tools. */
  modelContext({ from, limit }: { from: number; limit: number }): ModelContextPage {
    return {
      from,
      messages: page(this.transcript.messages, from, limit),
      total: this.transcript.length,
      tools: this.tools,
      toolsDigest: this.toolsDigest,
    };
  }

  /**
   * The next message to answer, taken from the queue; `undefined` when the run should roll over first. While rolling
   * over, it answers only up to the last message an `ask` from before the rollover was due waits for; later messages
   * (signals, and asks that came meanwhile) are carried to the next run, so steady traffic cannot postpone it forever.
   */
  nextMessage(): IncomingMessage | undefined {
    const answerNext = this.rollingOver ? this.asksWaiting : this.queue.length > 0;
    return answerNext ? this.queue.shift() : undefined;
  }

  /** A turn starts answering `message`; `cancel` cancels it (on interrupt). Returns what the turn needs. */
  startTurn(message: IncomingMessage, cancel: () => void): ConversationTurn {
    this.turns++;
    this.turnsThisRun++;
    this.transcript.append({ role: 'user', content: message.content, id: message.id });
    this.events.startTurn(this.turns, message.id);
    const running: RunningTurn = { turn: this.turns, messageId: message.id, cancel, interrupted: false };
    const output = message.output ?? this.settings.output;
    this.current = running;
    return {
      conversationId: this.conversationId,
      turn: running.turn,
      messageId: message.id,
      transcript: this.transcript,
      settings: this.settings,
      // Only when asked for, so the turns of conversations without structured output take the path they always took.
      ...(output !== undefined ? { output } : {}),
      observer: observeTurn(running, {
        events: this.events,
        inputs: this.inputs,
        changed: () => this.hooks.changed(),
        ending: () => this.ending,
        toolsListed: (tools, digest) => {
          this.tools = tools;
          this.toolsDigest = digest;
        },
      }),
      approvals: this.approvals,
      inputs: this.inputs,
      costs: this.costs,
      contextWindow: this.contextWindow,
      ...(this.tools !== undefined && this.toolsDigest !== undefined
        ? { knownTools: { tools: this.tools, digest: this.toolsDigest } }
        : {}),
    };
  }

  /** The running turn finished with `result`. */
  finishTurn(result: TurnResult): void {
    if (result.stopReason === 'cancelled') {
      const why = this.current?.reason ? `: ${this.current.reason}` : '';
      this.transcript.append({ role: 'assistant', content: `[The user interrupted this turn${why}.]` });
    }
    this.current = undefined;
    const { conversationId: _conversation, ...finished } = result;
    this.events.append({ type: 'turn_finished', ...finished } satisfies Omit<TurnFinishedEvent, 'offset'>);
    this.lastResult = result;
    this.recentResults.push(result);
    if (this.recentResults.length > RECENT_RESULTS) this.recentResults.shift();
  }

  /** The run closes: what it returns, with the state and settings the run that reopens it starts from. */
  close(closedBecause: ConversationOutcome['closedBecause']): ConversationOutcome {
    this.ending = closedBecause === 'ended';
    return {
      conversationId: this.conversationId,
      closedBecause,
      state: this.state(),
      settings: this.settings,
      ...(this.closeWhenIdle ? { closeWhenIdle: true } : {}),
    };
  }

  /** What this run hands to the next (continue-as-new) or returns when it closes. */
  state(): ConversationState {
    // A summary (or the provider's compaction) and what follows it are what the next run needs (./carried-transcript.ts).
    const kept = carriedForNextRun(this.transcript.messages);
    // An ended conversation is never reopened: its events would only add to the history.
    const streamEvents = this.ending ? [] : this.events.carried();
    return {
      formatVersion: CARRIED_STATE_FORMAT,
      transcript: kept.messages,
      transcriptOffset: this.transcriptOffset + kept.dropped,
      turns: this.turns,
      queue: [...this.queue],
      seenMessageIds: this.seen.toArray(),
      ...(this.lastResult ? { lastResult: this.lastResult } : {}),
      ...(this.ending ? {} : { recentResults: carriedResults(this.recentResults) }),
      streamOffset: this.events.nextOffset,
      ...(streamEvents.length > 0 ? { streamEvents } : {}),
      ...(this.ending ? { ended: true } : {}),
      ...this.approvals.carried(),
      ...(this.costs.carried() ? { cost: this.costs.carried() } : {}),
      ...(this.contextWindow.carried() ? { contextWindow: this.contextWindow.carried() } : {}),
    };
  }

  private enqueue(message: IncomingMessage): boolean {
    if (this.seen.has(message.id)) return false;
    this.seen.add(message.id);
    this.queue.push(message);
    return true;
  }

  private resultOf(messageId: string): TurnResult | undefined {
    return this.recentResults.find((result) => result.messageId === messageId);
  }
}
