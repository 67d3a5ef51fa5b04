import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  log,
  proxyActivities,
  sleep,
  TimeoutFailure,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { toolsDigest as digestOfTools } from '../shared/digest.js';
import { FailureType, errorMessage } from '../shared/errors.js';
import type { ModelCallInput, ModelCallResult, ToolDefinition, ToolMessage } from '../shared/types.js';
import { ZERO_USAGE } from '../shared/types.js';
import {
  addUsage,
  type BudgetLimit,
  completionTokenLimit,
  exhaustedLimit,
  overrun,
  resolveBudget,
  toolCallsAllowed,
  type TurnSpend,
} from './budget.js';
import type { ConversationSettings, StopReason, TurnResult } from './definitions.js';
import {
  DEFAULT_STREAM,
  type EventLog,
  MAX_ARGUMENTS_PREVIEW_CHARS,
  MAX_RESULT_PREVIEW_CHARS,
  type ModelStreamOptions,
  preview,
} from './stream-events.js';
import { prepareToolCall, SYNTHETIC_RESULTS } from './tool-calls.js';
import type { Transcript } from './transcript.js';

const DEFAULT_MODEL_ATTEMPTS = 5;
const DEFAULT_TOOL_ATTEMPTS = 3;

const { callModel } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  // The model activity heartbeats while it waits, so a dead worker is noticed in seconds, not minutes.
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

const { callTool } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // Tool calls heartbeat too; the heartbeat also records that a request was sent (see docs/mcp.md).
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Sent with the final-answer call when a budget limit stopped the turn. */
export const FINAL_ANSWER_INSTRUCTION =
  'The budget for this turn is used up, so tools are no longer available. ' +
  'Answer the user now with the information you already have, and say briefly what you could not finish.';

const LIMIT_NAMES: Record<BudgetLimit, string> = {
  rounds: 'model call',
  toolCalls: 'tool call',
  tokens: 'token',
  time: 'time',
};

/** Live progress of a turn, read by the status query and shown in the Web UI's current details. */
export interface TurnProgress {
  spend: TurnSpend;
  activity: string;
}

export interface TurnContext {
  conversationId: string;
  workflowId: string;
  runId: string;
  turn: number;
  messageId: string;
  transcript: Transcript;
  settings: ConversationSettings;
  /** Set by the conversation when the user interrupts this turn. */
  readonly interrupted: () => boolean;
  /** Called whenever the turn's spend or current activity changes. */
  onProgress(progress: TurnProgress): void;
  /** Called once the turn's tools are known, so the model-context query can answer with them. */
  onTools(tools: ToolDefinition[], digest: string | undefined): void;
  /** The conversation's event stream: the turn appends model-call and tool events. */
  events: EventLog;
}

type LoopStop =
  | { kind: 'answered'; answer: string | null }
  | { kind: 'budget'; limit: BudgetLimit }
  | { kind: 'cancelled' }
  | { kind: 'error'; type: string; message: string };

/**
 * One turn: call the model; run the tool calls it asks for, each as its own activity (in parallel, results appended
 * in the model's order); repeat until it answers or a limit is reached. Every decision is made from what this
 * workflow recorded, so replay after a crash takes the same path and spends the same budget.
 */
export async function runTurn(context: TurnContext): Promise<TurnResult> {
  const { transcript, settings, turn } = context;
  const budget = resolveBudget(settings.budget);
  // Date.now() in workflow code is Temporal's workflow time (the sandbox replaces it): deterministic on replay, and
  // skipped forward by the time-skipping test server. Every time reading in this file relies on that.
  const spend: TurnSpend = { rounds: 0, toolCalls: 0, usage: ZERO_USAGE, startedAt: Date.now() };
  const report = (activity: string) => context.onProgress({ spend: { ...spend }, activity });

  let timedOut = false;
  const work = new CancellationScope();
  const timer = new CancellationScope();
  // One timer per turn (not per round) keeps history small; when it fires, whatever is in flight is cancelled.
  timer
    .run(() => sleep(budget.maxDurationMs))
    .then(
      () => {
        timedOut = true;
        work.cancel();
      },
      () => undefined,
    );

  let model = settings.model;
  const cancelledResult = (call: Parameters<typeof SYNTHETIC_RESULTS.cancelled>[0]): ToolMessage =>
    timedOut ? SYNTHETIC_RESULTS.timeBudgetCancelled(call) : SYNTHETIC_RESULTS.cancelled(call);

  // Rounds are numbered by calls started, not completed, so a call abandoned by the time limit and the final-answer
  // call after it carry different idempotency keys.
  let round = 0;
  // The turn's tools, listed by its first model call (no activity of their own) and used by every later call.
  let tools = new Map<string, ToolDefinition>();
  let toolsDigest: string | undefined;
  let toolsListed = false;

  const modelCall = (final: boolean): Promise<ModelCallResult> => {
    round++;
    const listTools = !final && !toolsListed;
    const { prefix, newMessages } = transcript.nextModelInput();
    report(`model · round ${round}`);
    const stream = settings.stream ?? DEFAULT_STREAM;
    const input: ModelCallInput & ModelStreamOptions = {
      workflowId: context.workflowId,
      runId: context.runId,
      turn,
      round,
      prefix,
      newMessages,
      toolsDigest,
      model,
      temperature: settings.temperature,
      maxCompletionTokens: final
        ? settings.maxCompletionTokens
        : completionTokenLimit(spend, budget, settings.maxCompletionTokens),
      maxInputTokens: settings.maxInputTokens,
      toolChoice: final ? 'none' : 'auto',
      instruction: final ? FINAL_ANSWER_INSTRUCTION : undefined,
      // Only when on, so the activity input of a conversation that does not stream is unchanged.
      ...(stream ? { stream } : {}),
      ...(listTools ? { listTools } : {}),
    };
    context.events.startModelCall(turn, round);
    return callModel
      .executeWithOptions(
        {
          summary:
            `turn ${turn} · model ${model ?? 'default'} · round ${round}` +
            (final ? ' · final answer' : listTools ? ' · lists tools' : ''),
          retry: { maximumAttempts: settings.modelAttempts ?? DEFAULT_MODEL_ATTEMPTS },
        },
        [input],
      )
      .then(
        (result) => {
          // A streamed answer's last batch comes with the result (see EventLog.finishModelCall).
          context.events.finishModelCall(stream ? result.message.content : undefined);
          return result;
        },
        (error: unknown) => {
          context.events.finishModelCall();
          throw error;
        },
      );
  };

  const recordModelResult = (result: ModelCallResult) => {
    if (result.turnSetup) {
      toolsListed = true;
      model ??= result.turnSetup.model;
      tools = new Map(result.turnSetup.tools.map((tool) => [tool.name, tool]));
      toolsDigest = digestOfTools(result.turnSetup.tools);
      context.onTools(result.turnSetup.tools, toolsDigest);
    }
    spend.rounds++;
    spend.usage = addUsage(spend.usage, result.usage);
    transcript.append(result.message);
    // The worker that made this call cached the prefix, the new messages and its own answer.
    transcript.markShared(transcript.length);
  };

  const toolFinished = (message: ToolMessage, startedAt: number): ToolMessage => {
    context.events.append({
      type: 'tool_call_finished',
      turn,
      toolCallId: message.toolCallId,
      name: message.name,
      outcome: message.outcome,
      preview: preview(message.content, MAX_RESULT_PREVIEW_CHARS),
      durationMs: Date.now() - startedAt,
    });
    return message;
  };

  const runTool = async (prepared: Extract<ReturnType<typeof prepareToolCall>, { kind: 'dispatch' }>) => {
    const { call, tool } = prepared;
    try {
      const result = await callTool.executeWithOptions(
        {
          summary: `turn ${turn} · tool ${call.name}`,
          startToCloseTimeout: tool.timeoutMs + 10_000,
          retry: { maximumAttempts: settings.toolAttempts ?? DEFAULT_TOOL_ATTEMPTS },
        },
        [
          {
            toolCallId: call.id,
            tool: {
              name: tool.name,
              server: tool.server,
              originalName: tool.originalName,
              annotations: tool.annotations,
              timeoutMs: tool.timeoutMs,
            },
            arguments: prepared.arguments,
          },
        ],
      );
      return {
        role: 'tool',
        toolCallId: call.id,
        name: call.name,
        outcome: result.outcome,
        content: result.content,
      } satisfies ToolMessage;
    } catch (error) {
      if (isCancellation(error)) return cancelledResult(call);
      return SYNTHETIC_RESULTS.unavailable(call, describeFailure(error, 'ToolTimeout').message);
    }
  };

  const loop = async (): Promise<LoopStop> => {
    for (;;) {
      const limit = timedOut ? 'time' : exhaustedLimit(spend, budget, Date.now());
      if (limit !== undefined) return { kind: 'budget', limit };

      let result: ModelCallResult;
      try {
        result = await modelCall(false);
      } catch (error) {
        if (isCancellation(error)) return timedOut ? { kind: 'budget', limit: 'time' } : { kind: 'cancelled' };
        return { kind: 'error', ...describeFailure(error) };
      }
      recordModelResult(result);
      const calls = result.message.toolCalls ?? [];
      if (calls.length === 0) return { kind: 'answered', answer: result.message.content };

      const prepared = calls.map((call) => prepareToolCall(call, tools));
      let allowed = toolCallsAllowed(spend, budget, prepared.filter((entry) => entry.kind === 'dispatch').length);
      report(`tools · ${calls.map((call) => call.name).join(', ')}`);
      const startedAt = Date.now();
      for (const call of calls) {
        context.events.append({
          type: 'tool_call_started',
          turn,
          toolCallId: call.id,
          name: call.name,
          arguments: preview(call.arguments, MAX_ARGUMENTS_PREVIEW_CHARS),
        });
      }
      const messages = await Promise.all(
        prepared.map(async (entry) => {
          if (entry.kind === 'reject') return toolFinished(entry.message, startedAt);
          if (allowed === 0) {
            return toolFinished(SYNTHETIC_RESULTS.budgetExhausted(entry.call, LIMIT_NAMES.toolCalls), startedAt);
          }
          allowed--;
          spend.toolCalls++;
          return toolFinished(await runTool(entry), startedAt);
        }),
      );
      transcript.append(...messages);
      report('thinking');
      if (context.interrupted()) return { kind: 'cancelled' };
      if (timedOut) return { kind: 'budget', limit: 'time' };
    }
  };

  let stop: LoopStop;
  try {
    stop = await work.run(loop);
  } finally {
    timer.cancel();
  }

  let answer: string | null = null;
  let stopReason: StopReason;
  let error: TurnResult['error'];
  switch (stop.kind) {
    case 'answered':
      answer = stop.answer;
      stopReason = 'completed';
      break;
    case 'cancelled':
      stopReason = 'cancelled';
      break;
    case 'error':
      stopReason = `error:${stop.type}`;
      error = { type: stop.type, message: stop.message };
      break;
    case 'budget':
      stopReason = `budget:${stop.limit}`;
      if (settings.finalAnswer !== false && !context.interrupted()) {
        try {
          const result = await modelCall(true);
          recordModelResult(result);
          answer = result.message.content;
        } catch (failure) {
          if (!isCancellation(failure)) error = describeFailure(failure);
        }
      }
      break;
  }

  const now = Date.now();
  const over = overrun(spend, budget, now);
  const result: TurnResult = {
    conversationId: context.conversationId,
    turn,
    messageId: context.messageId,
    answer,
    stopReason,
    rounds: spend.rounds,
    toolCalls: spend.toolCalls,
    usage: spend.usage,
    durationMs: now - spend.startedAt,
    ...(Object.keys(over).length > 0 ? { overrun: over } : {}),
    ...(error ? { error } : {}),
  };
  log.info('turn finished', { turn, stopReason, rounds: spend.rounds, toolCalls: spend.toolCalls });
  return result;
}

/** The failure type and message of a failed activity, for the turn result or a synthetic tool message. */
export function describeFailure(
  error: unknown,
  timeoutType: string = FailureType.ModelTimeout,
): { type: string; message: string } {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    return { type: cause.type ?? 'ApplicationFailure', message: cause.message };
  }
  if (cause instanceof TimeoutFailure) {
    return { type: timeoutType, message: "timed out (the activity's timeout was reached on every attempt)" };
  }
  return { type: 'Unknown', message: errorMessage(cause) };
}
