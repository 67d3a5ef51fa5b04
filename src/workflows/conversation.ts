import {
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  log,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import { FailureType } from '../shared/errors.js';
import type { ChatMessage, ToolDefinition } from '../shared/types.js';
import {
  askUpdate,
  type ConversationInput,
  type ConversationOutcome,
  type ConversationPhase,
  type ConversationState,
  type ConversationStatus,
  endSignal,
  type IncomingMessage,
  interruptSignal,
  modelContextQuery,
  pollEventsUpdate,
  statusQuery,
  streamSignal,
  transcriptQuery,
  type TurnResult,
  userMessageSignal,
} from './definitions.js';
import { carriedTranscript, RecentIds, validateMessage } from './conversation-state.js';
import {
  DEFAULT_POLL_WAIT_MS,
  EventLog,
  MAX_POLL_WAIT_MS,
  MAX_WAITING_POLLS,
  type PollEventsRequest,
  StreamFailureType,
  type TurnFinishedEvent,
} from './stream-events.js';
import { runTurn, type TurnProgress } from './turn.js';
import { Transcript } from './transcript.js';

export const DEFAULT_MAX_TURNS_PER_RUN = 100;
/** Results of recent turns kept for asks that are retried after their turn finished. */
const RECENT_RESULTS = 20;
/** Largest page a query answers with, in characters of JSON: well under the 4 MB gRPC message limit. */
const MAX_PAGE_CHARS = 1_000_000;

/**
 * One conversation: a queue of user messages answered one turn at a time, driven by signals and updates,
 * continued as new between turns so it can live for months.
 */
export async function conversationWorkflow(input: ConversationInput): Promise<ConversationOutcome> {
  const { conversationId } = input;
  const settings = input.settings ?? {};
  const info = workflowInfo();
  const carried = input.state;
  const initial: ChatMessage[] =
    carried?.transcript ?? (settings.systemPrompt ? [{ role: 'system', content: settings.systemPrompt }] : []);
  const transcript = new Transcript(initial, carried !== undefined);
  const transcriptOffset = carried?.transcriptOffset ?? 0;
  let turns = carried?.turns ?? 0;
  let turnsThisRun = 0;
  const queue: IncomingMessage[] = [];
  const seen = new RecentIds(carried?.seenMessageIds ?? []);
  const recentResults: TurnResult[] = [];
  let lastResult = carried?.lastResult;
  let ending = false;
  let current:
    | {
        turn: number;
        messageId: string;
        scope: CancellationScope;
        interrupted: boolean;
        reason?: string;
        progress?: TurnProgress;
      }
    | undefined;
  /** Messages whose `ask` update is waiting for an answer. */
  const waitingAsks = new Set<string>();
  let tools: ToolDefinition[] | undefined;
  let toolsDigest: string | undefined;
  /** The event stream subscribers poll (docs/streaming.md). */
  const events = new EventLog(carried?.streamOffset ?? 0, carried?.streamEvents);
  let waitingPolls = 0;
  /** Set while the run waits for its handlers before closing or continuing as new: polls answer at once. */
  let streamClosing = false;

  const rollingOver = () =>
    workflowInfo().continueAsNewSuggested || turnsThisRun >= (settings.maxTurnsPerRun ?? DEFAULT_MAX_TURNS_PER_RUN);
  const phase = (): ConversationPhase => (ending && !current ? 'ended' : current ? 'running' : 'idle');

  const enqueue = (message: IncomingMessage): boolean => {
    if (seen.has(message.id)) return false;
    seen.add(message.id);
    queue.push(message);
    return true;
  };
  // Carried messages were seen (and remembered) by the previous run already.
  queue.push(...(carried?.queue ?? []));
  for (const message of input.messages ?? []) enqueue(message);

  // Search attributes are upserted only when they change: each upsert is a history event and a visibility write.
  let published: { status: ConversationPhase; turns: number } | undefined;
  const publishState = () => {
    const status = phase();
    if (published?.status !== status || published.turns !== turns) {
      upsertSearchAttributes([
        { key: SearchAttribute.status, value: status },
        { key: SearchAttribute.turns, value: turns },
        // Set once per run; continue-as-new carries search attributes over.
        ...(published ? [] : [{ key: SearchAttribute.conversationId, value: conversationId }]),
      ]);
      published = { status, turns };
    }
    describeForUi();
  };

  const describeForUi = () => {
    const lines = [`**Conversation** \`${conversationId}\` · ${phase()} · ${turns} turns · ${queue.length} queued`];
    if (current?.progress) {
      const { spend, activity } = current.progress;
      lines.push(
        `**Turn ${current.turn}** · ${activity}`,
        `rounds ${spend.rounds} · tool calls ${spend.toolCalls} · tokens ${spend.usage.totalTokens}`,
      );
    } else if (lastResult) {
      lines.push(`Last turn ${lastResult.turn}: ${lastResult.stopReason}`);
    }
    setCurrentDetails(lines.join('\n\n'));
  };

  setHandler(userMessageSignal, (message) => {
    try {
      validateMessage(message, settings);
    } catch (error) {
      log.warn('ignored an invalid userMessage signal', { error: String(error) });
      return;
    }
    if (ending) {
      log.warn('ignored a message sent after the conversation ended', { messageId: message.id });
      return;
    }
    if (enqueue(message)) describeForUi();
  });

  setHandler(
    askUpdate,
    async (message) => {
      const earlier = recentResults.find((result) => result.messageId === message.id);
      if (earlier) return earlier;
      const pending = current?.messageId === message.id || queue.some((queued) => queued.id === message.id);
      if (seen.has(message.id) && !pending) {
        throw ApplicationFailure.create({
          type: FailureType.InvalidMessage,
          nonRetryable: true,
          message: `Message ${message.id} was answered long ago and its result is no longer kept; send it with a new id.`,
        });
      }
      enqueue(message);
      describeForUi();
      waitingAsks.add(message.id);
      try {
        await condition(() => recentResults.some((result) => result.messageId === message.id) || (ending && !current));
      } finally {
        waitingAsks.delete(message.id);
      }
      const result = recentResults.find((entry) => entry.messageId === message.id);
      if (result) return result;
      throw ApplicationFailure.create({
        type: FailureType.ConversationEnded,
        nonRetryable: true,
        message: `Conversation ${conversationId} ended before message ${message.id} was answered.`,
      });
    },
    {
      validator: (message) => {
        validateMessage(message, settings);
        if (ending) {
          throw ApplicationFailure.create({
            type: FailureType.ConversationEnded,
            nonRetryable: true,
            message: `Conversation ${conversationId} has ended; start a new conversation to continue.`,
          });
        }
        if (rollingOver() && !recentResults.some((result) => result.messageId === message.id)) {
          throw ApplicationFailure.create({
            type: FailureType.ConversationRollingOver,
            message: `Conversation ${conversationId} is continuing as new; send the message again to the new run.`,
          });
        }
      },
    },
  );

  setHandler(interruptSignal, (request) => {
    if (!current) return;
    current.interrupted = true;
    current.reason = request?.reason;
    current.scope.cancel();
  });

  setHandler(streamSignal, (batch) => {
    events.acceptBatch(batch);
  });

  setHandler(
    pollEventsUpdate,
    async (request: PollEventsRequest | undefined) => {
      const { start, truncated } = events.resolve(request?.from);
      const waitMs = Math.min(request?.waitMs ?? DEFAULT_POLL_WAIT_MS, MAX_POLL_WAIT_MS);
      if (!events.hasFrom(start) && !streamClosing && waitMs > 0) {
        waitingPolls++;
        try {
          await condition(() => events.hasFrom(start) || streamClosing, waitMs);
        } finally {
          waitingPolls--;
        }
      }
      return { ...events.read(start), truncated, closing: streamClosing };
    },
    {
      validator: (request: PollEventsRequest | undefined) => {
        const { from, waitMs } = request ?? {};
        if ((from !== undefined && !Number.isInteger(from)) || (waitMs !== undefined && !(waitMs >= 0))) {
          throw ApplicationFailure.create({
            type: StreamFailureType.InvalidPoll,
            nonRetryable: true,
            message: 'pollEvents takes { from?: integer offset, waitMs?: milliseconds >= 0 }.',
          });
        }
        if (waitingPolls >= MAX_WAITING_POLLS) {
          throw ApplicationFailure.create({
            type: StreamFailureType.TooManySubscribers,
            nonRetryable: true,
            message:
              `Conversation ${conversationId} has ${waitingPolls} event polls waiting already (Temporal allows 10 ` +
              'updates in flight per workflow): share one subscription per conversation, as the HTTP bridge does.',
          });
        }
      },
    },
  );

  setHandler(endSignal, () => {
    ending = true;
    describeForUi();
  });

  setHandler(statusQuery, (): ConversationStatus => {
    const status: ConversationStatus = {
      conversationId,
      phase: phase(),
      turns,
      queued: queue.length,
      transcriptLength: transcriptOffset + transcript.length,
      transcriptOffset,
      ...(lastResult ? { lastResult } : {}),
    };
    if (current?.progress) {
      const { spend, activity } = current.progress;
      status.currentTurn = {
        turn: current.turn,
        messageId: current.messageId,
        rounds: spend.rounds,
        toolCalls: spend.toolCalls,
        usage: spend.usage,
        startedAt: new Date(spend.startedAt).toISOString(),
        activity,
      };
    }
    return status;
  });

  setHandler(transcriptQuery, (request) => {
    const from = Math.max(transcriptOffset, request?.from ?? transcriptOffset);
    const limit = Math.max(1, Math.min(request?.limit ?? 200, 1000));
    const messages = page(transcript.messages, from - transcriptOffset, limit);
    return {
      from,
      messages,
      total: transcriptOffset + transcript.length,
      offset: transcriptOffset,
      ...(input.previousRunId ? { previousRunId: input.previousRunId } : {}),
    };
  });

  setHandler(modelContextQuery, ({ from, limit }) => ({
    from,
    messages: page(transcript.messages, from, limit),
    total: transcript.length,
    tools,
    toolsDigest,
  }));

  // A run that starts with a message starts its turn in this same workflow task, which publishes `running`.
  if (queue.length === 0) publishState();
  else describeForUi();

  for (;;) {
    if (input.closeWhenIdle && queue.length === 0 && !ending) {
      await handlersFinished();
      if (queue.length === 0) return close('completed');
    }
    const ready = () => queue.length > 0 || ending || rollingOver();
    // `condition(fn, undefined)` would time out at once: pass a timeout only when one is configured.
    const woke =
      settings.idleTimeoutMs === undefined
        ? (await condition(ready), true)
        : await condition(ready, settings.idleTimeoutMs);
    if (!woke) {
      log.info('closing the idle conversation; the next message reopens it', { conversationId });
      await handlersFinished();
      return close('idle');
    }
    if (ending) break;
    // While rolling over, answer only up to the last message an `ask` waits for (new asks are rejected meanwhile);
    // messages that came by signal are carried to the next run, so steady traffic cannot postpone it forever.
    const answerNext = rollingOver() ? queue.some((queued) => waitingAsks.has(queued.id)) : queue.length > 0;
    const message = answerNext ? queue.shift() : undefined;
    if (message === undefined) {
      await handlersFinished();
      if (queue.some((queued) => waitingAsks.has(queued.id))) continue;
      return continueAsNew<typeof conversationWorkflow>({
        conversationId,
        settings,
        closeWhenIdle: input.closeWhenIdle,
        state: state(),
        previousRunId: info.runId,
      });
    }

    turns++;
    turnsThisRun++;
    transcript.append({ role: 'user', content: message.content, id: message.id });
    events.startTurn(turns, message.id);
    const scope = new CancellationScope();
    current = { turn: turns, messageId: message.id, scope, interrupted: false };
    const running = current;
    publishState();
    const result = await scope.run(() =>
      runTurn({
        conversationId,
        workflowId: info.workflowId,
        runId: info.runId,
        turn: turns,
        messageId: message.id,
        transcript,
        settings,
        interrupted: () => running.interrupted,
        onProgress: (progress) => {
          running.progress = progress;
          describeForUi();
        },
        onTools: (turnTools, digest) => {
          tools = turnTools;
          toolsDigest = digest;
        },
        events,
      }),
    );
    if (result.stopReason === 'cancelled') {
      const why = running.reason ? `: ${running.reason}` : '';
      transcript.append({ role: 'assistant', content: `[The user interrupted this turn${why}.]` });
    }
    current = undefined;
    const { conversationId: _conversation, ...finished } = result;
    events.append({ type: 'turn_finished', ...finished } satisfies Omit<TurnFinishedEvent, 'offset'>);
    lastResult = result;
    recentResults.push(result);
    if (recentResults.length > RECENT_RESULTS) recentResults.shift();
    publishState();
  }

  await handlersFinished();
  return close('ended');

  /** Wait for the handlers before the run closes or continues as new; waiting event polls are answered first. */
  async function handlersFinished(): Promise<void> {
    streamClosing = true;
    await condition(allHandlersFinished);
    // Not closing after all (a message came meanwhile): polls wait again.
    streamClosing = false;
  }

  function state(): ConversationState {
    const kept = carriedTranscript(transcript.messages);
    // An ended conversation is never reopened: its events would only add to the history.
    const streamEvents = ending ? [] : events.carried();
    return {
      transcript: kept.messages,
      transcriptOffset: transcriptOffset + kept.dropped,
      turns,
      queue: [...queue],
      seenMessageIds: seen.toArray(),
      ...(lastResult ? { lastResult } : {}),
      streamOffset: events.nextOffset,
      ...(streamEvents.length > 0 ? { streamEvents } : {}),
    };
  }

  function close(closedBecause: ConversationOutcome['closedBecause']): ConversationOutcome {
    ending = closedBecause === 'ended';
    publishState();
    return { conversationId, closedBecause, state: state() };
  }
}

function page<T>(items: readonly T[], from: number, limit: number): T[] {
  const result: T[] = [];
  let chars = 0;
  for (let index = Math.max(0, from); index < items.length && result.length < limit; index++) {
    const item = items[index] as T;
    chars += JSON.stringify(item).length;
    if (chars > MAX_PAGE_CHARS && result.length > 0) break;
    result.push(item);
  }
  return result;
}
