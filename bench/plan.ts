import type { TurnSpec } from './workload.js';

export interface ConcurrencyLevel {
  concurrency: number;
  /** One-turn conversations to run at this level with the model answering at once / with the model delay. */
  turnsWithoutDelay: number;
  turnsWithDelay: number;
}

export interface Plan {
  modelDelaysMs: number[];
  levels: ConcurrencyLevel[];
  /** Turns each contender runs (two at a time) before anything is measured: JIT, connections, caches. */
  warmupTurns: number;
  /** A conversation of several turns, to see whether history per step grows with its length (100 steps). */
  longConversation: TurnSpec[] | undefined;
  /** Size of the history replayed on a cold worker; 0 skips the replay. */
  replayTargetEvents: number;
  /** Time to first token (bench/first-token); undefined skips it. */
  firstToken: FirstTokenPlan | undefined;
}

export interface FirstTokenPlan {
  /** The model's wait before its answer, as a hosted model's time to first token. */
  modelDelayMs: number;
  /** Then between two words of the answer. */
  chunkDelayMs: number;
  levels: { concurrency: number; turns: number }[];
}

/** 21 + 21 + 21 + 37 = 100 steps. */
const HUNDRED_STEPS: TurnSpec[] = [10, 10, 10, 18].map((chain) => ({ chain, modelDelayMs: 0 }));

export const PLANS = {
  /** Everything, for docs/benchmarks.md: about 20 minutes on two cores. */
  full: {
    modelDelaysMs: [0, 200],
    levels: [
      // At least two slices per level (turns >= 2 x concurrency), so that no contender always follows the same one:
      // with one slice, two identical builds of durable-agent measured 1.02x and 1.23x the floor at ten conversations.
      { concurrency: 1, turnsWithoutDelay: 20, turnsWithDelay: 10 },
      { concurrency: 10, turnsWithoutDelay: 30, turnsWithDelay: 30 },
      { concurrency: 50, turnsWithoutDelay: 100, turnsWithDelay: 100 },
      { concurrency: 100, turnsWithoutDelay: 200, turnsWithDelay: 200 },
    ],
    warmupTurns: 4,
    longConversation: HUNDRED_STEPS,
    replayTargetEvents: 4000,
    firstToken: {
      modelDelayMs: 300,
      chunkDelayMs: 20,
      levels: [
        { concurrency: 1, turns: 20 },
        { concurrency: 50, turns: 100 },
      ],
    },
  },
  /**
   * For CI: that the harness still runs end to end, Temporal's own integration included (so that its install and its
   * contender cannot break unseen), in about a minute. Numbers are not for publishing.
   */
  quick: {
    modelDelaysMs: [0],
    levels: [
      { concurrency: 1, turnsWithoutDelay: 5, turnsWithDelay: 0 },
      { concurrency: 10, turnsWithoutDelay: 10, turnsWithDelay: 0 },
    ],
    warmupTurns: 2,
    longConversation: undefined,
    replayTargetEvents: 0,
    firstToken: { modelDelayMs: 300, chunkDelayMs: 20, levels: [{ concurrency: 1, turns: 5 }] },
  },
} satisfies Record<string, Plan>;

/** The plan with only these model delays and concurrency levels (comma-separated), e.g. for an experiment. */
export function narrowPlan(plan: Plan, delays: string | undefined, concurrency: string | undefined): Plan {
  const list = (value: string | undefined) => value?.split(',').map(Number);
  const keepDelays = list(delays);
  const keepLevels = list(concurrency);
  const firstToken = plan.firstToken && {
    ...plan.firstToken,
    levels: plan.firstToken.levels.filter((level) => !keepLevels || keepLevels.includes(level.concurrency)),
  };
  return {
    ...plan,
    firstToken,
    modelDelaysMs: keepDelays ? plan.modelDelaysMs.filter((delay) => keepDelays.includes(delay)) : plan.modelDelaysMs,
    levels: keepLevels ? plan.levels.filter((level) => keepLevels.includes(level.concurrency)) : plan.levels,
  };
}

/** The plan with `factor` times as many measured turns per level (more samples for an A/B run, e.g. `--scale 3`). */
export function scalePlan(plan: Plan, factor: number): Plan {
  if (!(factor > 0)) throw new Error(`--scale: expected a positive number, got ${factor}`);
  return {
    ...plan,
    levels: plan.levels.map((level) => ({
      ...level,
      turnsWithoutDelay: Math.round(level.turnsWithoutDelay * factor),
      turnsWithDelay: Math.round(level.turnsWithDelay * factor),
    })),
    firstToken: plan.firstToken && {
      ...plan.firstToken,
      levels: plan.firstToken.levels.map((level) => ({ ...level, turns: Math.round(level.turns * factor) })),
    },
  };
}

/** Most slices a level is split into. */
const MAX_SLICES = 5;

/**
 * The turns of a level run in slices (each at least `concurrency` turns), the contenders taking turns slice by slice,
 * so that load drifting on the machine falls on all of them alike. Returns the turns of each slice.
 */
export function sliceTurns(turns: number, concurrency: number): number[] {
  const slices = Math.max(1, Math.min(MAX_SLICES, Math.floor(turns / concurrency)));
  return Array.from({ length: slices }, (_, slice) => Math.floor(turns / slices) + (slice < turns % slices ? 1 : 0));
}

/**
 * Rotates the contenders' order slice after slice over the whole run: work the server does after a batch (timer tasks
 * of activity timeouts fire seconds later) falls on whoever runs next, so nobody should always be next.
 */
export class Rotation {
  private count = 0;

  /** `items` starting one further along than the last call's order, wrapping around. */
  next<T>(items: readonly T[]): T[] {
    const by = this.count++;
    const start = items.length === 0 ? 0 : by % items.length;
    return [...items.slice(start), ...items.slice(0, start)];
  }
}
