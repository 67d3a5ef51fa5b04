import { replayInFreshProcess } from './contender-process.js';
import { MIB, type MeasuredHistories } from './figures.js';
import { measureHistory, type ConversationHistory } from './history.js';
import { log } from './log.js';
import type { Plan } from './plan.js';
import type { ContenderSummary, ReplayFigures } from './results.js';
import { round } from './stats.js';
import type { RunContext, RunningContender } from './workbench.js';
import { CHAIN_LENGTH } from './workload.js';

/**
 * The history one turn leaves, and the long conversation's when the plan has one, for each durable contender. Records
 * the activities per turn in the contender's summary.
 */
export async function measureHistories(
  run: RunContext,
  durable: RunningContender[],
  plan: Plan,
  summaries: Map<string, ContenderSummary>,
): Promise<MeasuredHistories> {
  const { historyClient } = run.workbench;
  const histories: MeasuredHistories = new Map();
  for (const contender of durable) {
    const { name } = contender.definition;
    log(`${name}: history of one turn${plan.longConversation ? ' and of a long conversation' : ''}`);
    try {
      const one = await contender.process.conversation([{ chain: CHAIN_LENGTH, modelDelayMs: 0 }]);
      const oneTurn = await measureHistory(historyClient, one.execution!.workflowId, one.execution!.runId);
      let long: ConversationHistory | undefined;
      if (plan.longConversation) {
        const conversation = await contender.process.conversation(plan.longConversation);
        long = await measureHistory(historyClient, conversation.execution!.workflowId, conversation.execution!.runId);
      }
      histories.set(name, { oneTurn, long });
      summaries.get(name)!.activitiesPerTurn = oneTurn.activities;
    } catch (error) {
      run.problems.push(`${name}: history measurement failed: ${String(error)}`);
    }
  }
  return histories;
}

/**
 * For each durable contender whose history was measured: a conversation of as many turns as make about
 * `plan.replayTargetEvents` events, its largest run replayed by a fresh process (bundling timed apart from replay).
 * Ratios are left null (see `withReplayRatios`).
 */
export async function measureReplays(
  run: RunContext,
  durable: RunningContender[],
  plan: Plan,
  histories: MeasuredHistories,
): Promise<ReplayFigures[]> {
  const { env, historyClient, namespace } = run.workbench;
  const replay: ReplayFigures[] = [];
  for (const contender of durable) {
    const { name } = contender.definition;
    const measured = histories.get(name);
    if (measured === undefined) continue;
    const turns = Math.max(1, Math.round(plan.replayTargetEvents / measured.oneTurn.events));
    log(`${name}: replaying a history of ${turns} turns on a cold worker`);
    try {
      const conversation = await contender.process.conversation(
        Array.from({ length: turns }, () => ({ chain: CHAIN_LENGTH, modelDelayMs: 0 })),
      );
      const { workflowId, runId } = conversation.execution!;
      const measuredLong = await measureHistory(historyClient, workflowId, runId);
      const biggest = measuredLong.runs.reduce((best, entry) => (entry.events > best.events ? entry : best));
      const result = await replayInFreshProcess(
        contender.definition.script,
        { address: env.address, namespace, workflowId, runId: biggest.runId },
        contender.definition.env,
      );
      replay.push({
        contender: name,
        turns,
        events: result.events,
        bundleMs: round(result.bundleMs, 0),
        replayMs: round(result.replayMs, 0),
        coldMs: round(result.bundleMs + result.replayMs, 0),
        rssMiB: round(result.rssBytes / MIB, 0),
        ratios: { replayMs: null, coldMs: null },
      });
    } catch (error) {
      run.problems.push(`${name}: replay failed: ${String(error)}`);
    }
  }
  return replay;
}
