import type { TurnSpec } from './workload.js';

/**
 * Messages between the benchmark (the parent) and a contender process. Each contender runs in its own process so that
 * its worker's memory and CPU are its own, and so that Temporal's integration can load its own SDK version.
 */

export type Command =
  /** Run `turns` one-turn conversations, `concurrency` at a time. */
  | { type: 'batch'; id: number; turns: number; concurrency: number; spec: TurnSpec }
  /** Run one conversation of these turns, one after the other, and measure its history. */
  | { type: 'conversation'; id: number; turns: TurnSpec[] }
  /**
   * Hand over the model and tool time this process spent for turns it did not start (two workers on one task queue:
   * a turn's calls run on either), by workflow id, and forget it.
   */
  | { type: 'drain'; id: number }
  | { type: 'close'; id: number };

export type Reply =
  | { type: 'ready'; startupMs: number }
  | { type: 'batch'; id: number; result: BatchResult }
  | { type: 'conversation'; id: number; result: ConversationResult }
  | { type: 'drain'; id: number; workMs: Record<string, number> }
  | { type: 'closed'; id: number }
  | { type: 'error'; id: number | undefined; message: string };

export interface TurnSample {
  /** From starting the turn (or its workflow) to having its answer. */
  latencyMs: number;
  /** Time spent inside model requests and tool calls, as seen from where they are made. */
  workMs: number;
  /** The turn's workflow (its first run), when the contender is durable: `--stack production` counts its actions. */
  execution?: { workflowId: string; runId: string };
}

export interface BatchResult {
  samples: TurnSample[];
  /** From the first turn's start to the last turn's end. */
  wallMs: number;
  /** CPU time of the contender process (worker, client and MCP client) during the batch. */
  cpuMs: number;
  /** Largest resident set size of the contender process seen during the batch. */
  peakRssBytes: number;
}

export interface ConversationResult {
  /** Model calls plus tool calls. */
  steps: number;
  /** The conversation's workflow (its first run), whose history the parent measures; absent without durability. */
  execution?: { workflowId: string; runId: string };
}

/** What a replay process prints as its only line of standard output. */
export interface ReplayResult {
  events: number;
  /** Bundling the workflow code from scratch. */
  bundleMs: number;
  /** `Worker.runReplayHistory` with that bundle. */
  replayMs: number;
  /** Resident set size of the replay process after the replay. */
  rssBytes: number;
}
