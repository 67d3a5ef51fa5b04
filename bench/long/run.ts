import type { ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { DurableAgentClient } from '../../src/client/index.js';
import type { Client } from '@temporalio/client';

/**
 * `npm run bench -- --long`: conversations far longer than the main run's, one at a time, each measured for what its
 * length does to history and to turn latency. A run is one file of bench/long exporting a {@link LongRun}, listed in
 * ./runs.ts.
 */
export interface LongRun {
  /** Short, kebab-case: the figures' key and `--long <name>` selects it. */
  name: string;
  /** One line for the report, e.g. `1,000 steps of 50 KB read_text_file results`. */
  label: string;
  /**
   * The worker's environment beyond the connection and the model (TEMPORAL_ADDRESS, OPENAI_BASE_URL, the task queue):
   * its MCP configuration, tool result limit, settings. `directory` is a temporary directory of the run's own.
   */
  workerEnvironment(directory: string): Promise<Record<string, string>>;
  /** The scripted model's script for the run's conversations, which work in `directory`. */
  script(directory: string): Parameters<ScriptedModel['reset']>[0];
  /** Drive one conversation, timing each turn with `bench.turn`. */
  converse(bench: LongBench): Promise<Conversed>;
}

/** The conversation a run drove. */
export interface Conversed {
  conversationId: string;
  turns: number;
  /** Tool calls, each with its result. */
  steps: number;
  /** Bytes of one step's tool result, the yardstick of history bytes per step. */
  resultBytes: number;
}

/** What a run drives its conversation with. */
export interface LongBench {
  client: DurableAgentClient;
  /** Reads histories, whichever run of the conversation; its messages may be large. */
  historyClient: Client;
  /** Time one turn (its latency is reported at the start and the end of the conversation). */
  turn<T>(work: () => Promise<T>): Promise<T>;
  log(message: string): void;
}

/** What one long run measured. */
export interface LongRunFigures {
  name: string;
  label: string;
  /** The worker build measured: `current`, or the `--baseline` commit. */
  build: string;
  turns: number;
  /** Tool calls, each with its result (a step of the measure: one result per step). */
  steps: number;
  historyBytes: number;
  historyEvents: number;
  runs: number;
  bytesPerStep: number;
  resultBytes: number;
  /** History bytes per step over the result's bytes: 1 is each result recorded once and nothing else. */
  bytesPerStepToResult: number;
  largestRun: { bytes: number; events: number; bytesShareOfLimit: number; eventsShareOfLimit: number };
  /** Mean latency of the first and the last five turns, in ms. */
  turnLatencyMs: { start: number; end: number };
  /** CPU time of the worker process (worker, activities, MCP client; not the MCP server's process) per step, in ms. */
  workerCpuMsPerStep: number | undefined;
  /** Model calls that summarized older turns (compaction): activities whose summary says so. */
  compactions: number;
  /** Of the conversation's runs: carried transcript bytes in their start events (continue-as-new hands it over). */
  carriedBytes: number;
  wallSeconds: number;
}
