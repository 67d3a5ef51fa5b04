import { isCancellation, log, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import { toolsDigest as digestOfTools } from '../shared/digest.js';
import { utcDay } from '../shared/tenants.js';
import { LOCAL_LEDGER_WRITE_PATCH, roundToLedger, SPEND_LEDGER_PATCH } from './ledger-writes.js';
import type { DailyCostCheck, ModelCallInput, ModelCallResult } from '../shared/types.js';
import { ZERO_COST, ZERO_USAGE } from '../shared/types.js';
import { addUsage, completionTokenLimit, exhaustedLimit, resolveBudget } from './budget.js';
import { addCost, type CostLimit, exhaustedCostLimit, hasCostBudget, isCostLimit } from './cost-budget.js';
import { DEFAULT_MODEL_ATTEMPTS, errorAttemptsAllowed, maximumAttempts } from './attempts.js';
import type { ConversationSettings } from './definitions.js';
import { DEFAULT_STREAM } from './stream-events.js';
import { describeFailure, logRefusedPayload } from './turn-failures.js';
import type { TurnContext } from './turn-context.js';
import { type ModelStep, type TurnResult, turnResult, type TurnStop, withFinalAnswer } from './turn-result.js';
import { TimeLimit } from './turn-approvals.js';
import { activityPriority, report, type TurnState } from './turn-state.js';
import { runToolCalls } from './turn-tools.js';
import { MODEL_CALL_OPTIONS } from './model-call-options.js';
import { knownToolList, listedTools, nameToolResults } from './recorded-once.js';
import { checkedAnswer, finalOutput, responseFormat } from './structured-output.js';
import {
  compactAfterRefusal,
  compactBeforeCall,
  compactionDue,
  lengthRefusal,
  noteTurnSetup,
  providerCompaction,
} from './compaction.js';
import {
  awaitBudgetDecision,
  costPause,
  type DailyCostLimitDetails,
  dailyLimitOf,
  dailyPause,
  pausesAt,
} from './budget-pause.js';

// Every Date.now() in this file (the loop's budget check, the turn's start and result) reads
// Temporal's workflow time, which the workflow sandbox puts in place of the clock: deterministic on replay, and skipped
// forward by the time-skipping test server.

const { callModel } = proxyActivities<Activities>(MODEL_CALL_OPTIONS);

/** The patch that turns on structured output (docs/upgrading.md): release 0.1.0's turns never asked for it. */
export const STRUCTURED_OUTPUT_PATCH = 'structured-output';

/** Sent with the final-answer call when a budget limit stopped the turn. */
export const FINAL_ANSWER_INSTRUCTION =
  'The budget for this turn is used up, so tools are no longer available. ' +
  'Answer the user now with the information you already have, and say briefly what you could not finish.';

export type { TurnContext, TurnObserver, TurnProgress } from './turn-context.js';
export { LOCAL_LEDGER_WRITE_PATCH, SPEND_LEDGER_PATCH } from './ledger-writes.js';

/**
 * The patch of the cost budget (docs/cost.md): a turn whose settings set one checks it before each model call. Asked
 * only then, so turns without a cost budget record no marker and replay as release 0.1.0 recorded them.
 */
export const COST_BUDGET_PATCH = 'cost-budget';

/**
 * One turn: call the model; run the tool calls it asks for, each as its own activity (in parallel, results appended
 * in the model's order); repeat until it answers or a limit is reached. Every decision is made from what this
 * workflow recorded, so replay after a crash takes the same path and spends the same budget.
 */
export async function runTurn(context: TurnContext): Promise<TurnResult> {
  const turn = startTurn(context);
  const clock = new TimeLimit(turn);
  turn.clock = clock;
  let stop: TurnStop;
  try {
    stop = await clock.work.run(async (): Promise<TurnStop> => {
      for (;;) {
        const limit = turn.timedOut
          ? 'time'
          : (exhaustedLimit(turn.spend, turn.budget, Date.now()) ?? exhaustedCost(turn));
        if (limit !== undefined) {
          // A cost limit set to `pause` holds the call for a person; only then is anything awaited here.
          if (!isCostLimit(limit) || !pausesAt(turn, limit)) return { kind: 'budget', limit };
          const decided = await awaitBudgetDecision(turn, costPause(turn, limit as 'cost' | 'conversationCost'));
          if (decided.kind === 'stop') return decided.stop;
        }
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
        nameToolResults(context.transcript);
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
    compaction: turn.compaction,
  });
  const { stopReason, rounds, toolCalls } = result;
  log.info('turn finished', { turn: context.turn, stopReason, rounds, toolCalls });
  return result;
}

// The awaits above and the promise chains below are as deep as they were when the recorded histories were written:
// when one activation resolves several things at once, that depth orders the commands. Keep it when editing.

function startTurn(context: TurnContext): TurnState {
  const budget = resolveBudget(context.settings.budget);
  const state: Omit<TurnState, 'ledgerLocally'> = {
    context,
    budget,
    spend: { rounds: 0, toolCalls: 0, usage: ZERO_USAGE, startedAt: Date.now() },
    round: 0,
    model: context.settings.model,
    tools: new Map(),
    toolsDigest: undefined,
    toolsListed: false,
    knownTools: knownToolList(context.knownTools),
    unavailableServers: [],
    timedOut: false,
    costLimited: hasCostBudget(budget, context.settings.conversationBudget) && patched(COST_BUDGET_PATCH),
    // Behind a patch: a turn replayed from a release before it asked for no output (docs/upgrading.md).
    output: context.output !== undefined && patched(STRUCTURED_OUTPUT_PATCH) ? context.output : undefined,
    corrections: 0,
    compaction: { summaries: 0, calls: 0 },
    ledgered: context.settings.tenant !== undefined && patched(SPEND_LEDGER_PATCH),
  };
  return { ...state, ledgerLocally: state.ledgered && patched(LOCAL_LEDGER_WRITE_PATCH) };
}

/** Which cost limit, if any, forbids the next model call (docs/cost.md). */
function exhaustedCost(turn: TurnState): CostLimit | undefined {
  if (!turn.costLimited) return undefined;
  const { costs, settings } = turn.context;
  const turnSpent = turn.spend.cost ?? ZERO_COST;
  return exhaustedCostLimit(turnSpent, costs.total, costs.nextCallUsd, turn.budget, settings.conversationBudget);
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
  // Only when due: a call that needs no compaction is scheduled as it always was (same commands, same await depth).
  if (compactionDue(turn)) {
    return compactBeforeCall(turn).then(
      () => callModelOnce(turn, final, false),
      (error: unknown) => stoppedBy(turn, error),
    );
  }
  return callModelOnce(turn, final, false);
}

/** How the turn stops when a summary call was cancelled (interrupt, time limit); other errors are thrown on. */
function stoppedBy(turn: TurnState, error: unknown): ModelStep {
  if (!isCancellation(error)) throw error;
  return turn.timedOut ? { kind: 'budget', limit: 'time' } : { kind: 'cancelled' };
}

/**
 * The model call itself. A context-length refusal compacts (or trims) and makes the call once more, whatever the
 * window table said (`retried` is then true: a second refusal ends the turn with it).
 */
function callModelOnce(
  turn: TurnState,
  final: boolean,
  retried: boolean,
  approvedPastDaily?: Pick<DailyCostCheck, 'approved' | 'raiseToUsd'>,
): Promise<ModelStep> {
  const { context } = turn;
  const round = ++turn.round;
  const listTools = !final && !turn.toolsListed;
  report(turn, `model · round ${round}`);
  const stream = context.settings.stream ?? DEFAULT_STREAM;
  const input = modelCallInput(turn, { final, listTools, stream, approvedPastDaily });
  context.observer.modelCallStarted(round);
  return callModel
    .executeWithOptions(
      {
        summary:
          `turn ${context.turn} · model ${turn.model ?? 'default'} · round ${round}` +
          (final ? ' · final answer' : listTools ? ' · lists tools' : '') +
          withoutServers(turn),
        retry: { maximumAttempts: maximumAttempts(modelAttempts(context.settings)) },
        ...activityPriority(turn),
      },
      [input],
    )
    .then(
      (result): ModelStep | Promise<ModelStep> => {
        // A streamed answer's last batch comes with the result (see EventLog.finishModelCall).
        context.observer.modelCallFinished(stream ? result.message.content : undefined);
        recordModelResult(turn, result);
        const step: ModelStep = { kind: 'reply', message: result.message };
        // Before the next call: a conversation's calls reach the ledger in order (spend-ledger.ts counts each once).
        return turn.ledgered ? roundToLedger(turn, round, result).then(() => step) : step;
      },
      (error: unknown): ModelStep | Promise<ModelStep> => {
        context.observer.modelCallFinished();
        if (isCancellation(error)) return turn.timedOut ? { kind: 'budget', limit: 'time' } : { kind: 'cancelled' };
        const daily = dailyLimitOf(error);
        if (daily !== undefined) return pastDailyLimit(turn, final, daily);
        const failed: ModelStep = {
          kind: 'error',
          error: logRefusedPayload(describeFailure(error), `model call, round ${round}`),
        };
        const refusal = retried ? undefined : lengthRefusal(turn, error);
        if (refusal === undefined) return failed;
        return compactAfterRefusal(turn, refusal).then(
          (changed) => (changed ? callModelOnce(turn, final, true) : failed),
          (compactionError: unknown) => stoppedBy(turn, compactionError),
        );
      },
    );
}

/**
 * The tenant's daily limit refused the call (the worker checked it): the turn stops with `budget:dailyCost`, or, with
 * `pause` in the tenants file, waits for a person and makes the call again past the limit when approved.
 */
async function pastDailyLimit(turn: TurnState, final: boolean, details: DailyCostLimitDetails): Promise<ModelStep> {
  const pause = final ? undefined : dailyPause(details);
  if (pause === undefined) return { kind: 'budget', limit: 'dailyCost' };
  const decided = await awaitBudgetDecision(turn, pause);
  if (decided.kind === 'stop') return decided.stop;
  const raised = decided.maxCostUsd !== undefined ? { raiseToUsd: decided.maxCostUsd } : {};
  return callModelOnce(turn, final, false, { approved: true, ...raised });
}

/** ` · without files, search` when the listing left servers out, so the Web UI shows it on every later model call. */
function withoutServers(turn: TurnState): string {
  const names = turn.unavailableServers.map(({ server }) => server);
  return names.length > 0 ? ` · without ${names.join(', ')}` : '';
}

function modelCallInput(
  turn: TurnState,
  {
    final,
    listTools,
    stream,
    approvedPastDaily,
  }: {
    final: boolean;
    listTools: boolean;
    stream: boolean;
    approvedPastDaily?: Pick<DailyCostCheck, 'approved' | 'raiseToUsd'>;
  },
): ModelCallInput {
  const { context, spend, budget } = turn;
  const { settings } = context;
  const { prefix, newMessages } = context.transcript.nextModelInput();
  // Only with `compaction: "provider"`, likewise (an activity input, no command: no patch).
  const native = providerCompaction(turn);
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
    maxInputTokens: inputLimit(settings.maxInputTokens, turn.compaction.trimTo),
    toolChoice: final ? 'none' : 'auto',
    instruction: final ? FINAL_ANSWER_INSTRUCTION : undefined,
    // Only when on, so the activity input of a conversation that does not stream is unchanged.
    ...(stream ? { stream } : {}),
    ...(listTools ? { listTools } : {}),
    ...(listTools && context.toolSelection ? { toolSelection: context.toolSelection } : {}),
    ...(listTools && turn.knownTools ? { knownToolsDigest: turn.knownTools.digest } : {}),
    // Only when set, likewise.
    ...(settings.thinking ? { thinking: settings.thinking } : {}),
    // Only when limited, likewise: the worker then refuses to call a model it cannot price.
    ...(turn.costLimited ? { costBudget: true as const } : {}),
    // A tenant's call: the worker checks the tenant's daily limit, when the tenants file sets one.
    ...(turn.ledgered ? { dailyCost: dailyCheck(turn, approvedPastDaily) } : {}),
    ...(turn.output ? { responseFormat: responseFormat(turn.output) } : {}),
    ...(native ? { providerCompaction: native } : {}),
    // Only when not the default, likewise: the activity counts its failed attempts against it.
    ...(modelAttempts(settings) !== DEFAULT_MODEL_ATTEMPTS ? { modelAttempts: modelAttempts(settings) } : {}),
  };
}

function dailyCheck(turn: TurnState, approved: Pick<DailyCostCheck, 'approved' | 'raiseToUsd'> = {}): DailyCostCheck {
  const { settings, costs } = turn.context;
  return { tenant: settings.tenant!, day: utcDay(Date.now()), leastUsd: costs.nextCallUsd, ...approved };
}

/** The settings' `maxInputTokens`, lowered to the trimming a failed compaction asked for. */
function inputLimit(configured: number | undefined, trimTo: number | undefined): number | undefined {
  if (trimTo === undefined) return configured;
  return configured === undefined ? trimTo : Math.min(configured, trimTo);
}

function recordModelResult(turn: TurnState, result: ModelCallResult): void {
  const { transcript, observer } = turn.context;
  if (result.turnSetup) {
    turn.toolsListed = true;
    turn.model ??= result.turnSetup.model;
    const tools = listedTools(result.turnSetup, turn.knownTools);
    noteTurnSetup(turn, tools);
    turn.tools = new Map(tools.map((tool) => [tool.name, tool]));
    turn.toolsDigest = result.turnSetup.toolsDigest ?? digestOfTools(tools);
    observer.toolsListed(tools, turn.toolsDigest);
    turn.unavailableServers = result.turnSetup.unavailableServers ?? [];
    if (turn.unavailableServers.length > 0) observer.serversUnavailable(turn.unavailableServers);
  }
  turn.spend.rounds++;
  turn.spend.usage = addUsage(turn.spend.usage, result.usage);
  if (result.cost !== undefined) {
    turn.spend.cost = addCost(turn.spend.cost ?? ZERO_COST, result.cost);
    turn.context.costs.record(result.cost);
  }
  if (result.contextEdits)
    turn.compaction.providerEdits = [...(turn.compaction.providerEdits ?? []), ...result.contextEdits];
  transcript.append(result.message);
  // The worker that made this call cached the prefix, the new messages and its own answer.
  transcript.markShared(transcript.length);
}

/** The conversation's model error attempts (`modelAttempts`, at least 1). */
function modelAttempts(settings: ConversationSettings): number {
  return errorAttemptsAllowed(settings.modelAttempts, DEFAULT_MODEL_ATTEMPTS);
}
