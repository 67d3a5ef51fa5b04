import type { Machine } from './machine.js';

/** The shape of docs/benchmarks.json. Times in ms, sizes in bytes unless the name says otherwise. */
export interface Results {
  generatedAt: string;
  command: string;
  quick: boolean;
  /** The commit measured (`git rev-parse HEAD`, or BENCH_SOURCE_COMMIT when run from an exported tree). */
  commit: string;
  /** Extra arguments of `temporal server start-dev`. */
  serverArgs: string[];
  machine: Machine;
  /** Load averages (1, 5, 15 min) when the run started and ended: other work on the machine skews the numbers. */
  load: { start: [number, number, number]; end: [number, number, number] };
  durationSeconds: number;
  workload: Workload;
  contenders: ContenderSummary[];
  runs: RunFigures[];
  history: HistoryFigures[];
  replay: ReplayFigures[];
  /** Time to first token through the client API and `serve` (absent from runs made before it was measured). */
  firstToken?: FirstTokenFigures[];
  /** Everything that went wrong without stopping the run (a contender that could not start, a failed batch). */
  problems: string[];
}

export interface Workload {
  chain: number;
  stepsPerTurn: number;
  modelCallsPerTurn: number;
  toolCallsPerTurn: number;
  modelDelaysMs: number[];
  concurrency: number[];
  tool: string;
  /** Steps of the long conversation (several turns). */
  longConversationSteps: number;
  /** Events the replayed history aims for. */
  replayTargetEvents: number;
}

export interface ContenderSummary {
  name: string;
  label: string;
  available: boolean;
  /** Why the contender could not run, when it could not. */
  reason?: string;
  /** Process start to a polling worker (includes bundling the workflow code). */
  startupMs?: number;
  /** Activities one turn of the workload schedules (from its history). */
  activitiesPerTurn?: number;
  /** Largest resident set size of the contender's process over all batches, in MiB. */
  peakRssMiB?: number;
  peakRssRatio?: number | null;
}

export interface Distribution {
  p50: number;
  p99: number;
  mean: number;
}

export interface RunFigures {
  contender: string;
  modelDelayMs: number;
  concurrency: number;
  turns: number;
  /** One turn, start to answer (for Temporal contenders: starting the workflow to its result). */
  latencyMs: Distribution;
  /** (turn latency − time inside model requests and tool calls) / steps. */
  overheadPerStepMs: Distribution;
  /** Time inside model requests and tool calls, per turn (mean). */
  workPerTurnMs: number;
  /**
   * (turn latency p50 − the in-process loop's turn latency p50 in the same conditions) / steps: what durability adds
   * to a step as a user sees it, including the model and tool calls being slower inside a busy worker.
   */
  addedToInProcessPerStepMs: number | null;
  turnsPerSecond: number;
  stepsPerSecond: number;
  /** CPU per step: the contender's process, the Temporal server, and the scripted model (the benchmark process). */
  cpuPerStepMs: { contender: number; server: number | null; modelServer: number };
  peakRssMiB: number;
  /** Each figure divided by the raw Temporal floor's in the same delay and concurrency. */
  ratios: {
    overheadP50: number | null;
    overheadP99: number | null;
    latencyP50: number | null;
    latencyP99: number | null;
    throughput: number | null;
  };
}

export interface HistorySize {
  steps: number;
  runs: number;
  events: number;
  bytes: number;
  activities: number;
  eventsPerStep: number;
  bytesPerStep: number;
  largestEventBytes: number;
}

export interface HistoryFigures {
  contender: string;
  oneTurn: HistorySize;
  long?: HistorySize;
  ratios: {
    oneTurnEventsPerStep: number | null;
    oneTurnBytesPerStep: number | null;
    longEventsPerStep: number | null;
    longBytesPerStep: number | null;
  };
}

export interface ReplayFigures {
  contender: string;
  turns: number;
  events: number;
  bundleMs: number;
  replayMs: number;
  /** Bundle plus replay: what a cold worker pays before it can answer for this workflow. */
  coldMs: number;
  rssMiB: number;
  ratios: { replayMs: number | null; coldMs: number | null };
}

export interface Percentiles {
  p50: number;
  p95: number;
}

/**
 * Time to first token at one concurrency level: every time is from the user's message being sent, except the model's
 * own (its request's arrival to its first text leaving). "Added" is a viewer's time minus the model's own, turn by
 * turn: the turn's start plus the delivery of the text.
 */
export interface FirstTokenFigures {
  contender: string;
  concurrency: number;
  /** Conversations of one turn each, every other one watched through the client API, the rest through `serve`. */
  turns: number;
  /** The scripted model's wait before its answer, then between two of its words. */
  modelDelayMs: number;
  chunkDelayMs: number;
  modelMs: Percentiles;
  /** Message sent → the model's request arrived. */
  toModelMs: Percentiles;
  /** Message sent → the first `text_delta` at a client subscribed through the client API (`subscribe`). */
  stackMs: Percentiles;
  /** Message sent → the first `text_delta` at an SSE client of `durable-agent serve`. */
  serveMs: Percentiles;
  addedStackMs: Percentiles;
  addedServeMs: Percentiles;
  /** The model's first text leaving → a viewer having it. */
  deliveryStackMs: Percentiles;
  deliveryServeMs: Percentiles;
  /** The goal for `addedStackMs.p50` and `addedServeMs.p50`, and whether both met it. */
  goalMs: number;
  goalMet: boolean;
}
