import { isCancellation, log, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { toolsDigest as digestOfTools } from '../shared/digest.js';
import { FailureType } from '../shared/errors.js';
import type {
  CallToolInputRequired,
  CallToolResult,
  ModelCallInput,
  ModelCallResult,
  ToolCall,
  ToolDefinition,
  ToolMessage,
  UnavailableServer,
} from '../shared/types.js';
import { ZERO_COST, ZERO_USAGE } from '../shared/types.js';
import {
  addUsage,
  completionTokenLimit,
  exhaustedLimit,
  resolveBudget,
  toolCallsAllowed,
  type TurnBudget,
  type TurnSpend,
} from './budget.js';
import { addCost, type CostLimit, exhaustedCostLimit, hasCostBudget, isCostLimit } from './cost-budget.js';
import { DEFAULT_MODEL_ATTEMPTS, DEFAULT_TOOL_ATTEMPTS, errorAttemptsAllowed, maximumAttempts } from './attempts.js';
import type { ConversationSettings } from './definitions.js';
import { DEFAULT_STREAM, type ModelStreamOptions } from './stream-events.js';
import { allowToolCalls, callToolInput, type PreparedToolCall, prepareToolCall } from './tool-calls.js';
import { describeFailure, logRefusedPayload, toolFailureMessage } from './turn-failures.js';
import type { TurnContext } from './turn-context.js';
import { type ModelStep, type TurnResult, turnResult, type TurnStop, withFinalAnswer } from './turn-result.js';
import { approvalReason } from '../shared/approval-policy.js';
import { awaitApproval, editedNote, TimeLimit } from './turn-approvals.js';
import { checkedAnswer, finalOutput, responseFormat, type OutputFormat } from './structured-output.js';
import { answerServerQuestions, type SendAgain } from './tool-questions.js';
import { runSubAgent } from './sub-agents.js';

// Every Date.now() in this file (the loop's budget check, the turn's start and result, tool-call durations) reads
// Temporal's workflow time, which the workflow sandbox puts in place of the clock: deterministic on replay, and skipped
// forward by the time-skipping test server.

// Each call sets `maximumAttempts`: its error attempts (counted by the activity) plus the attempts it may lose to
// workers that die or shut down (see attempts.ts).
//
// A worker that dies (SIGKILL, out of memory) is noticed only when its attempt's heartbeat timeout passes: the retry
// starts on another worker after that timeout plus the first retry interval (1 s), at most 7 s for the 6 s below. The
// activities heartbeat every 2 s (src/activities/calls/heartbeat.ts), so the timeout waits for three missed
// heartbeats; an event loop stalled for longer than 4 to 6 s times a live attempt out (docs/reliability.md). A
// timeout here changes no command a workflow emits, only the attributes of calls scheduled from now on, so no patch.
const { callModel } = proxyActivities<Activities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '6 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    // A result Temporal refused as too large would be as large again (and a retry is a second paid call).
    nonRetryableErrorTypes: [FailureType.PayloadsTooLarge],
  },
});

const { callTool } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // As the model call's; the heartbeat also records that a request was sent (see docs/mcp.md).
  heartbeatTimeout: '6 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    // The tool ran and its result was refused as too large: a retry would run it again for the same result.
    nonRetryableErrorTypes: [FailureType.PayloadsTooLarge],
  },
});

/** The patch that turns on structured output (docs/upgrading.md): release 0.1.0's turns never asked for it. */
export const STRUCTURED_OUTPUT_PATCH = 'structured-output';

/** Sent with the final-answer call when a budget limit stopped the turn. */
export const FINAL_ANSWER_INSTRUCTION =
  'The budget for this turn is used up, so tools are no longer available. ' +
  'Answer the user now with the information you already have, and say briefly what you could not finish.';

export type { TurnContext, TurnObserver, TurnProgress } from './turn-context.js';

/**
 * The patch of the cost budget (docs/cost.md): a turn whose settings set one checks it before each model call. Asked
 * only then, so turns without a cost budget record no marker and replay as release 0.1.0 recorded them.
 */
export const COST_BUDGET_PATCH = 'cost-budget';

/** Everything a turn changes as it runs, in one object that the functions below share. */
interface TurnState {
  readonly context: TurnContext;
  readonly budget: TurnBudget;
  readonly spend: TurnSpend;
  /**
   * Model calls started, not completed: a call abandoned by the time limit and the final-answer call after it carry
   * different idempotency keys.
   */
  round: number;
  /** The conversation's model, or the worker's default once the first call names it. */
  model: string | undefined;
  /** The turn's tools, listed by its first model call (no activity of their own) and used by every later call. */
  tools: ReadonlyMap<string, ToolDefinition>;
  toolsDigest: string | undefined;
  toolsListed: boolean;
  /** MCP servers the listing left out: the turn goes on without their tools. */
  unavailableServers: UnavailableServer[];
  /** The time limit fired: what was in flight was cancelled by the budget, not by the user. */
  timedOut: boolean;
  /** A cost budget limits this turn (and the patch that checks it was applied). */
  costLimited: boolean;
  /** The answer must be JSON matching this (structured output); undefined for a text answer. */
  output: OutputFormat | undefined;
  /** Answers sent back to the model because they did not match `output`. */
  corrections: number;
}

/**
 * One turn: call the model; run the tool calls it asks for, each as its own activity (in parallel, results appended
 * in the model's order); repeat until it answers or a limit is reached. Every decision is made from what this
 * workflow recorded, so replay after a crash takes the same path and spends the same budget.
 */
export async function runTurn(context: TurnContext): Promise<TurnResult> {
  const turn = startTurn(context);
  const clock = new TimeLimit(turn);
  let stop: TurnStop;
  try {
    stop = await clock.work.run(async (): Promise<TurnStop> => {
      for (;;) {
        const limit = turn.timedOut
          ? 'time'
          : (exhaustedLimit(turn.spend, turn.budget, Date.now()) ?? exhaustedCost(turn));
        if (limit !== undefined) return { kind: 'budget', limit };
        const step = await askModel(turn, false);
        if (step.kind !== 'reply') return step;
        const calls = step.message.toolCalls ?? [];
        if (calls.length === 0) {
          const answered = turn.output ? checkedAnswer(turn, turn.output, step.message.content) : undefined;
          // Structured output that did not match: the correction request is in the transcript; ask again.
          if (answered === 'correcting') continue;
          return answered ?? { kind: 'answered', answer: step.message.content };
        }
        context.transcript.append(...(await runToolCalls(turn, calls, clock)));
        report(turn, 'thinking');
        if (context.observer.interrupted()) return { kind: 'cancelled' };
        if (turn.timedOut) return { kind: 'budget', limit: 'time' };
      }
    });
  } finally {
    clock.cancel();
  }
  // A cost limit is a cap on money: the final-answer call would be a call over it, so a cost stop makes none, and
  // neither does another limit's stop when the call would go past a cost limit.
  if (stop.kind === 'budget' && !isCostLimit(stop.limit) && wantsFinalAnswer(turn) && !exhaustedCost(turn)) {
    stop = withFinalAnswer(stop, await askModel(turn, true));
  }
  if (stop.kind === 'budget' && turn.output && typeof stop.answer === 'string') stop = finalOutput(turn.output, stop);
  const result = turnResult(context, stop, turn.spend, turn.budget, Date.now(), turn.unavailableServers, {
    conversationCost: context.costs.total,
  });
  const { stopReason, rounds, toolCalls } = result;
  log.info('turn finished', { turn: context.turn, stopReason, rounds, toolCalls });
  return result;
}

// The awaits above and the promise chains below are as deep as they were when the recorded histories were written:
// when one activation resolves several things at once, that depth orders the commands. Keep it when editing.

function startTurn(context: TurnContext): TurnState {
  const budget = resolveBudget(context.settings.budget);
  return {
    context,
    budget,
    spend: { rounds: 0, toolCalls: 0, usage: ZERO_USAGE, startedAt: Date.now() },
    round: 0,
    model: context.settings.model,
    tools: new Map(),
    toolsDigest: undefined,
    toolsListed: false,
    unavailableServers: [],
    timedOut: false,
    costLimited: hasCostBudget(budget, context.settings.conversationBudget) && patched(COST_BUDGET_PATCH),
    // Behind a patch: a turn replayed from a release before it asked for no output (docs/upgrading.md).
    output: context.output !== undefined && patched(STRUCTURED_OUTPUT_PATCH) ? context.output : undefined,
    corrections: 0,
  };
}

/** Which cost limit, if any, forbids the next model call (docs/cost.md). */
function exhaustedCost(turn: TurnState): CostLimit | undefined {
  if (!turn.costLimited) return undefined;
  const { costs, settings } = turn.context;
  const turnSpent = turn.spend.cost ?? ZERO_COST;
  return exhaustedCostLimit(turnSpent, costs.total, costs.nextCallUsd, turn.budget, settings.conversationBudget);
}

function report(turn: TurnState, activity: string): void {
  turn.context.observer.progress({ spend: { ...turn.spend }, activity });
}

/** After a budget stop, one more model call with tools disabled, unless settings turn it off or the user interrupted. */
function wantsFinalAnswer(turn: TurnState): boolean {
  return turn.context.settings.finalAnswer !== false && !turn.context.observer.interrupted();
}

/**
 * One model call (round), recorded; `final` is the final-answer call after a budget stop. Resolves to the reply, or
 * to how the turn stops when the call failed for good or was cancelled.
 */
function askModel(turn: TurnState, final: boolean): Promise<ModelStep> {
  const { context } = turn;
  const round = ++turn.round;
  const listTools = !final && !turn.toolsListed;
  report(turn, `model · round ${round}`);
  const stream = context.settings.stream ?? DEFAULT_STREAM;
  const input = modelCallInput(turn, { final, listTools, stream });
  context.observer.modelCallStarted(round);
  return callModel
    .executeWithOptions(
      {
        summary:
          `turn ${context.turn} · model ${turn.model ?? 'default'} · round ${round}` +
          (final ? ' · final answer' : listTools ? ' · lists tools' : '') +
          withoutServers(turn),
        retry: { maximumAttempts: maximumAttempts(modelAttempts(context.settings)) },
      },
      [input],
    )
    .then(
      (result): ModelStep => {
        // A streamed answer's last batch comes with the result (see EventLog.finishModelCall).
        context.observer.modelCallFinished(stream ? result.message.content : undefined);
        recordModelResult(turn, result);
        return { kind: 'reply', message: result.message };
      },
      (error: unknown): ModelStep => {
        context.observer.modelCallFinished();
        if (isCancellation(error)) return turn.timedOut ? { kind: 'budget', limit: 'time' } : { kind: 'cancelled' };
        return { kind: 'error', error: logRefusedPayload(describeFailure(error), `model call, round ${round}`) };
      },
    );
}

/** ` · without files, search` when the listing left servers out, so the Web UI shows it on every later model call. */
function withoutServers(turn: TurnState): string {
  const names = turn.unavailableServers.map(({ server }) => server);
  return names.length > 0 ? ` · without ${names.join(', ')}` : '';
}

function modelCallInput(
  turn: TurnState,
  { final, listTools, stream }: { final: boolean; listTools: boolean; stream: boolean },
): ModelCallInput & ModelStreamOptions {
  const { context, spend, budget } = turn;
  const { settings } = context;
  const { prefix, newMessages } = context.transcript.nextModelInput();
  return {
    workflowId: context.workflowId,
    runId: context.runId,
    turn: context.turn,
    round: turn.round,
    prefix,
    newMessages,
    toolsDigest: turn.toolsDigest,
    model: turn.model,
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
    ...(listTools && context.toolSelection ? { toolSelection: context.toolSelection } : {}),
    // Only when set, likewise.
    ...(settings.thinking ? { thinking: settings.thinking } : {}),
    // Only when limited, likewise: the worker then refuses to call a model it cannot price.
    ...(turn.costLimited ? { costBudget: true as const } : {}),
    ...(turn.output ? { responseFormat: responseFormat(turn.output) } : {}),
    // Only when not the default, likewise: the activity counts its failed attempts against it.
    ...(modelAttempts(settings) !== DEFAULT_MODEL_ATTEMPTS ? { modelAttempts: modelAttempts(settings) } : {}),
  };
}

function recordModelResult(turn: TurnState, result: ModelCallResult): void {
  const { transcript, observer } = turn.context;
  if (result.turnSetup) {
    turn.toolsListed = true;
    turn.model ??= result.turnSetup.model;
    turn.tools = new Map(result.turnSetup.tools.map((tool) => [tool.name, tool]));
    turn.toolsDigest = digestOfTools(result.turnSetup.tools);
    observer.toolsListed(result.turnSetup.tools, turn.toolsDigest);
    turn.unavailableServers = result.turnSetup.unavailableServers ?? [];
    if (turn.unavailableServers.length > 0) observer.serversUnavailable(turn.unavailableServers);
  }
  turn.spend.rounds++;
  turn.spend.usage = addUsage(turn.spend.usage, result.usage);
  if (result.cost !== undefined) {
    turn.spend.cost = addCost(turn.spend.cost ?? ZERO_COST, result.cost);
    turn.context.costs.record(result.cost);
  }
  transcript.append(result.message);
  // The worker that made this call cached the prefix, the new messages and its own answer.
  transcript.markShared(transcript.length);
}

/**
 * The tool calls of one reply, each as its own activity, in parallel; one message per call, in the model's order.
 * Which calls run is decided before any is dispatched: those the tool-call budget has no room for get a message.
 * A call that needs a person's approval waits for its own decision (docs/approvals.md) while the others go on.
 */
function runToolCalls(turn: TurnState, calls: readonly ToolCall[], limit: TimeLimit): Promise<ToolMessage[]> {
  const { observer, settings, approvals } = turn.context;
  const prepared = calls.map((call) => prepareToolCall(call, turn.tools));
  const dispatchable = prepared.filter((entry) => entry.kind === 'dispatch').length;
  const allowed = toolCallsAllowed(turn.spend, turn.budget, dispatchable);
  const planned = allowToolCalls(prepared, allowed);
  report(turn, `tools · ${calls.map((call) => call.name).join(', ')}`);
  const startedAt = Date.now();
  for (const call of calls) observer.toolStarted(call);
  turn.spend.toolCalls += allowed;
  const finished = (message: ToolMessage): ToolMessage => {
    observer.toolFinished(message, Date.now() - startedAt);
    return message;
  };
  const reasons = planned.map((entry) =>
    entry.kind === 'dispatch' ? approvalReason(entry.tool, settings.approval, approvals.allowedTools) : undefined,
  );
  return Promise.all(
    planned.map(async (entry, index) =>
      entry.kind === 'reject'
        ? finished(entry.message)
        : reasons[index] === undefined
          ? finished(await dispatchToolCall(turn, limit, entry))
          : finished(await approveAndDispatch(turn, limit, entry, reasons[index])),
    ),
  );
}

/**
 * A call that needs approval: wait for the decision, then run it (with a person's edited arguments, noted before its
 * result) or answer it with the denial. A call that does not run does not count against the tool-call budget.
 */
async function approveAndDispatch(
  turn: TurnState,
  limit: TimeLimit,
  entry: Extract<PreparedToolCall, { kind: 'dispatch' }>,
  reason: string,
): Promise<ToolMessage> {
  const outcome = await awaitApproval(turn.context, limit, { ...entry, reason });
  if (outcome.kind === 'message') {
    turn.spend.toolCalls--;
    return outcome.message;
  }
  const message = await dispatchToolCall(turn, limit, { ...entry, arguments: outcome.arguments });
  const edited = outcome.decision.arguments;
  return edited === undefined ? message : { ...message, content: editedNote(edited) + message.content };
}

/**
 * One tool call as its own activity; a 2026-07-28 server's questions are answered by the person and the call sent
 * again as new activities (./tool-questions.ts).
 */
async function dispatchToolCall(
  turn: TurnState,
  limit: TimeLimit,
  { call, tool, arguments: toolArguments }: Extract<PreparedToolCall, { kind: 'dispatch' }>,
): Promise<ToolMessage> {
  // A sub-agent is a child workflow, not an activity; no tool of a release before sub-agents has this source.
  if (tool.source === 'agent') return runSubAgent(turn, call, tool, toolArguments, limit);
  const toolAttempts = errorAttemptsAllowed(turn.context.settings.toolAttempts, DEFAULT_TOOL_ATTEMPTS);
  const lastAttempt = maximumAttempts(toolAttempts);
  const send: SendAgain = (again) =>
    callTool.executeWithOptions(
      {
        summary: `turn ${turn.context.turn} · tool ${call.name}` + (again ? ` · round ${again.inputRound}` : ''),
        // The call's own timeout does not run while the person answers its server's questions (docs/mcp.md).
        startToCloseTimeout: tool.timeoutMs + (tool.elicitationTimeoutMs ?? 0) + 10_000,
        retry: { maximumAttempts: lastAttempt },
      },
      [{ ...callToolInput(call, tool, toolArguments, toolAttempts, turn.context.questionsTo), ...again }],
    );
  try {
    let result: CallToolResult | CallToolInputRequired | ToolMessage = await send(undefined);
    if (result.outcome === 'input_required') {
      result = await answerServerQuestions(turn.context, limit, { call, tool }, result, send);
      if ('role' in result) return result;
    }
    return { role: 'tool', toolCallId: call.id, name: call.name, outcome: result.outcome, content: result.content };
  } catch (error) {
    return toolFailureMessage(turn.timedOut, call, tool, error, lastAttempt);
  }
}

/** The conversation's model error attempts (`modelAttempts`, at least 1). */
function modelAttempts(settings: ConversationSettings): number {
  return errorAttemptsAllowed(settings.modelAttempts, DEFAULT_MODEL_ATTEMPTS);
}
