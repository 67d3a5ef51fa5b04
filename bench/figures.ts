import { FLOOR, IN_PROCESS } from './contenders/index.js';
import type { ConversationHistory } from './history.js';
import type { Plan } from './plan.js';
import type { BatchResult } from './protocol.js';
import type { HistoryFigures, HistorySize, ReplayFigures, RunFigures } from './results.js';
import { mean, percentile, ratio, round } from './stats.js';
import { CHAIN_LENGTH, stepsOf, type TurnSpec } from './workload.js';

/** The figures of docs/benchmarks.json from what was measured: plain functions, no I/O. */

export const MIB = 2 ** 20;

/** One contender's batch, with the CPU the server and the scripted model (this process) spent meanwhile. */
export interface Measured {
  result: BatchResult;
  serverCpuMs: number | undefined;
  modelServerCpuMs: number;
}

/** Two slices of one contender's level as if they had been one batch. */
export function mergeMeasured(a: Measured, b: Measured): Measured {
  return {
    result: {
      samples: [...a.result.samples, ...b.result.samples],
      wallMs: a.result.wallMs + b.result.wallMs,
      cpuMs: a.result.cpuMs + b.result.cpuMs,
      peakRssBytes: Math.max(a.result.peakRssBytes, b.result.peakRssBytes),
    },
    serverCpuMs: a.serverCpuMs === undefined || b.serverCpuMs === undefined ? undefined : a.serverCpuMs + b.serverCpuMs,
    modelServerCpuMs: a.modelServerCpuMs + b.modelServerCpuMs,
  };
}

/**
 * The figures of one level, one entry per contender in `order` that has a measurement, each with its ratios to the
 * floor and its latency added to the in-process loop's, per step.
 */
export function levelFigures(
  order: readonly string[],
  measured: ReadonlyMap<string, Measured>,
  spec: TurnSpec,
  concurrency: number,
): RunFigures[] {
  const runs = order.flatMap((name) => {
    const figures = measured.get(name);
    return figures === undefined ? [] : [runFigures(name, spec, concurrency, figures)];
  });
  const floor = runs.find((run) => run.contender === FLOOR.name);
  const inProcess = runs.find((run) => run.contender === IN_PROCESS.name);
  return runs.map((run) => {
    const added = inProcess && (run.latencyMs.p50 - inProcess.latencyMs.p50) / stepsOf(CHAIN_LENGTH);
    return { ...withRunRatios(run, floor), addedToInProcessPerStepMs: added === undefined ? null : round(added, 2) };
  });
}

function runFigures(contender: string, spec: TurnSpec, concurrency: number, measured: Measured): RunFigures {
  const { result, serverCpuMs, modelServerCpuMs } = measured;
  const steps = stepsOf(spec.chain);
  const latencies = result.samples.map((sample) => sample.latencyMs);
  const overheads = result.samples.map((sample) => (sample.latencyMs - sample.workMs) / steps);
  const totalSteps = steps * result.samples.length;
  return {
    contender,
    modelDelayMs: spec.modelDelayMs,
    concurrency,
    turns: result.samples.length,
    latencyMs: distribution(latencies, 1),
    overheadPerStepMs: distribution(overheads, 2),
    workPerTurnMs: round(mean(result.samples.map((sample) => sample.workMs)), 1),
    addedToInProcessPerStepMs: null,
    turnsPerSecond: round(result.samples.length / (result.wallMs / 1000), 2),
    stepsPerSecond: round(totalSteps / (result.wallMs / 1000), 1),
    cpuPerStepMs: {
      contender: round(result.cpuMs / totalSteps, 2),
      server: serverCpuMs === undefined ? null : round(serverCpuMs / totalSteps, 2),
      modelServer: round(modelServerCpuMs / totalSteps, 2),
    },
    peakRssMiB: round(result.peakRssBytes / MIB, 0),
    ratios: { overheadP50: null, overheadP99: null, latencyP50: null, latencyP99: null, throughput: null },
  };
}

function withRunRatios(run: RunFigures, floor: RunFigures | undefined): RunFigures {
  const two = (value: number | null) => (value === null ? null : round(value, 2));
  return {
    ...run,
    ratios: {
      overheadP50: two(ratio(run.overheadPerStepMs.p50, floor?.overheadPerStepMs.p50)),
      overheadP99: two(ratio(run.overheadPerStepMs.p99, floor?.overheadPerStepMs.p99)),
      latencyP50: two(ratio(run.latencyMs.p50, floor?.latencyMs.p50)),
      latencyP99: two(ratio(run.latencyMs.p99, floor?.latencyMs.p99)),
      throughput: two(ratio(run.turnsPerSecond, floor?.turnsPerSecond)),
    },
  };
}

function distribution(values: number[], digits: number) {
  return {
    p50: round(percentile(values, 50), digits),
    p99: round(percentile(values, 99), digits),
    mean: round(mean(values), digits),
  };
}

/** The histories measured per contender: one turn, and the long conversation when the plan has one. */
export type MeasuredHistories = Map<string, { oneTurn: ConversationHistory; long?: ConversationHistory }>;

/** History sizes per step, with their ratios to the floor's. */
export function historyFigures(histories: MeasuredHistories, plan: Plan): HistoryFigures[] {
  const floorHistory = histories.get(FLOOR.name);
  const oneTurnSteps = stepsOf(CHAIN_LENGTH);
  const longSteps = plan.longConversation ? sumSteps(plan.longConversation) : 0;
  const floorOne = floorHistory && historySize(floorHistory.oneTurn, oneTurnSteps);
  const floorLong = floorHistory?.long && historySize(floorHistory.long, longSteps);
  return [...histories].map(([name, measured]) => {
    const oneTurn = historySize(measured.oneTurn, oneTurnSteps);
    const long = measured.long && historySize(measured.long, longSteps);
    return {
      contender: name,
      oneTurn,
      ...(long ? { long } : {}),
      ratios: {
        oneTurnEventsPerStep: ratio(oneTurn.eventsPerStep, floorOne?.eventsPerStep),
        oneTurnBytesPerStep: ratio(oneTurn.bytesPerStep, floorOne?.bytesPerStep),
        longEventsPerStep: ratio(long?.eventsPerStep, floorLong?.eventsPerStep),
        longBytesPerStep: ratio(long?.bytesPerStep, floorLong?.bytesPerStep),
      },
    };
  });
}

function historySize(history: ConversationHistory, steps: number): HistorySize {
  return {
    steps,
    runs: history.runs.length,
    events: history.events,
    bytes: history.bytes,
    activities: history.activities,
    eventsPerStep: round(history.events / steps, 2),
    bytesPerStep: round(history.bytes / steps, 0),
    largestEventBytes: Math.max(...history.runs.map((run) => run.largestEventBytes)),
  };
}

/** Each replay's times divided by the floor's. */
export function withReplayRatios(replay: ReplayFigures[]): ReplayFigures[] {
  const floor = replay.find((entry) => entry.contender === FLOOR.name);
  return replay.map((entry) => ({
    ...entry,
    ratios: { replayMs: ratio(entry.replayMs, floor?.replayMs), coldMs: ratio(entry.coldMs, floor?.coldMs) },
  }));
}

/**
 * Every contender running and every level of the plan that has no figures, as `<contender> at <level>`: a run that
 * lacks any has failed, so that no contender (the peer above all) drops out of the tables unnoticed.
 */
export function missingFigures(contenders: readonly string[], plan: Plan, runs: readonly RunFigures[]): string[] {
  return plan.modelDelaysMs.flatMap((modelDelayMs) =>
    plan.levels.flatMap((level) =>
      contenders
        .filter(
          (name) =>
            !runs.some(
              (run) =>
                run.contender === name && run.modelDelayMs === modelDelayMs && run.concurrency === level.concurrency,
            ),
        )
        .map((name) => `${name} at concurrency ${level.concurrency}, model delay ${modelDelayMs} ms`),
    ),
  );
}

export function sumSteps(turns: TurnSpec[]): number {
  return turns.reduce((total, turn) => total + stepsOf(turn.chain), 0);
}
