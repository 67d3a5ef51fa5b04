import type { FirstTokenPlan } from '../plan.js';
import type { FirstTokenFigures, Percentiles } from '../results.js';
import { percentile, round } from '../stats.js';

/** The goal: a viewer's first token at most this much after the model's own, at the median. */
export const FIRST_TOKEN_GOAL_MS = 50;

/** How the viewer of a turn watched it: through the client API (`subscribe`), or as an SSE client of `serve`. */
export type Route = 'client' | 'serve';

/** One turn, in ms from the user's message being sent (the model's own from its request's arrival). */
export interface FirstTokenSample {
  route: Route;
  /** Message sent → the model's request arrived (the turn's start, the model activity's scheduling). */
  toModelMs: number;
  /** The model's own time to first token: its request's arrival → its first text leaving. */
  modelMs: number;
  /** Message sent → the first `text_delta` at the viewer. */
  firstTokenMs: number;
}

function percentiles(values: number[]): Percentiles {
  return { p50: round(percentile(values, 50), 1), p95: round(percentile(values, 95), 1) };
}

/** A level's figures; what durable-agent adds is taken turn by turn, then its percentiles. */
export function firstTokenFigures(
  contender: string,
  plan: FirstTokenPlan,
  concurrency: number,
  samples: FirstTokenSample[],
): FirstTokenFigures {
  const of = (pick: (sample: FirstTokenSample) => number, route?: Route) =>
    percentiles(samples.filter((sample) => route === undefined || sample.route === route).map(pick));
  const added = (sample: FirstTokenSample) => sample.firstTokenMs - sample.modelMs;
  const delivery = (sample: FirstTokenSample) => sample.firstTokenMs - sample.toModelMs - sample.modelMs;
  const addedStackMs = of(added, 'client');
  const addedServeMs = of(added, 'serve');
  return {
    contender,
    concurrency,
    turns: samples.length,
    modelDelayMs: plan.modelDelayMs,
    chunkDelayMs: plan.chunkDelayMs,
    modelMs: of((sample) => sample.modelMs),
    toModelMs: of((sample) => sample.toModelMs),
    stackMs: of((sample) => sample.firstTokenMs, 'client'),
    serveMs: of((sample) => sample.firstTokenMs, 'serve'),
    addedStackMs,
    addedServeMs,
    deliveryStackMs: of(delivery, 'client'),
    deliveryServeMs: of(delivery, 'serve'),
    goalMs: FIRST_TOKEN_GOAL_MS,
    goalMet: addedStackMs.p50 <= FIRST_TOKEN_GOAL_MS && addedServeMs.p50 <= FIRST_TOKEN_GOAL_MS,
  };
}
