import { performance } from 'node:perf_hooks';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { startTestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptFunction } from '../../src/testing/scripted-model/index.js';
import { askUpdate } from '../../src/workflows/definitions.js';
import type { TurnResult } from '../../src/workflows/turn-result.js';
import { measureHistory } from '../history.js';

/**
 * One conversation of many turns past a small window (issue 43, item 3): the scripted model refuses requests over
 * `contextWindow` tokens and answers summary requests itself; each turn states a new fact, the last asks for the
 * first. What compaction costs over a long conversation: history per step, the largest run, the turn latency at the
 * start and at the end, the summaries made.
 */

export interface WindowRunOptions {
  /** Turns in the conversation. Default 300. */
  turns?: number;
  /** The scripted model's window, in its tokens (a token per 4 characters of a request). Default 8,000. */
  contextWindow?: number;
  /** A Temporal server to run on; default a dev server started (and stopped) for the run. */
  env?: TestWorkflowEnvironment;
  /** Turns averaged for the latency at the start and at the end. Default 20. */
  latencyTurns?: number;
  /** Called after each turn, e.g. to show progress. */
  onTurn?: (turn: number, result: TurnResult, ms: number) => void;
}

export interface WindowRunFigures {
  turns: number;
  contextWindow: number;
  /** Activities scheduled: model calls, summary calls, the earlier-run look of a first run. */
  steps: number;
  historyBytes: number;
  historyBytesPerStep: number;
  runs: number;
  largestRun: { bytes: number; events: number };
  /** Median wall time of an `ask`, in ms, over the first and the last `latencyTurns` turns. */
  turnLatencyMs: { start: number; end: number };
  /** Summaries made (turn results' `compaction.summaries`), and the turns that made one. */
  compactions: number;
  turnsCompacting: number;
  /** Turns whose summary failed and that trimmed instead. */
  turnsTrimmed: number;
  /** Requests the model refused as over its window. */
  refusals: number;
  /** Turns that did not complete. */
  failedTurns: number;
  /** The last answer named the first turn's fact. */
  firstFactRecalled: boolean;
}

const FILLER =
  ' I mention it between a dozen other things on my mind today: the budget review, the train times for Friday, ' +
  'the plumber who did not come, the garden that needs water, the report for the board and the dinner on Sunday. ' +
  'Keep it in mind: I will ask about it much later and will not repeat it.';
const fact = (turn: number) => `The code word of turn ${turn} is word-${(turn * 7919) % 100_003}.`;
const QUESTION = 'What was the code word of turn 1?';

const model: ScriptFunction = (request) => {
  const text = JSON.stringify(request.body);
  if (text.includes(QUESTION)) {
    return { content: text.includes(fact(1)) ? `It was ${fact(1)}` : 'I no longer know.' };
  }
  return { content: 'Noted; I will keep that code word together with everything else you told me so far.' };
};

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

export async function runWindowConversation(options: WindowRunOptions = {}): Promise<WindowRunFigures> {
  const turns = options.turns ?? 300;
  const contextWindow = options.contextWindow ?? 8_000;
  const latencyTurns = Math.min(options.latencyTurns ?? 20, Math.floor(turns / 2));
  const env = options.env ?? (await createLocalEnvironment());
  const scripted = await startScriptedModel({ script: model, contextWindow, summaries: 'user-lines' });
  const agent = await startTestAgent({ env, model: scripted });
  try {
    const handle = await agent.startConversation(`window-run-${Date.now()}`);
    const results: TurnResult[] = [];
    const latencies: number[] = [];
    for (let turn = 1; turn <= turns; turn++) {
      const content = `${fact(turn)}${FILLER}${turn === turns ? ` ${QUESTION}` : ''}`;
      const started = performance.now();
      const result = await handle.executeUpdate(askUpdate, { args: [{ id: `m${turn}`, content }] });
      const ms = performance.now() - started;
      results.push(result);
      latencies.push(ms);
      options.onTurn?.(turn, result, ms);
    }
    const history = await measureHistory(env.client, handle.workflowId, handle.firstExecutionRunId);
    const largest = history.runs.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    return {
      turns,
      contextWindow,
      steps: history.activities,
      historyBytes: history.bytes,
      historyBytesPerStep: Math.round(history.bytes / Math.max(1, history.activities)),
      runs: history.runs.length,
      largestRun: { bytes: largest.bytes, events: largest.events },
      turnLatencyMs: {
        start: Math.round(median(latencies.slice(0, latencyTurns))),
        end: Math.round(median(latencies.slice(-latencyTurns))),
      },
      compactions: results.reduce((sum, result) => sum + (result.compaction?.summaries ?? 0), 0),
      turnsCompacting: results.filter((result) => (result.compaction?.summaries ?? 0) > 0).length,
      turnsTrimmed: results.filter((result) => result.compaction?.trimmed !== undefined).length,
      refusals: scripted.requests.filter((request) => request.status === 400).length,
      failedTurns: results.filter((result) => result.stopReason !== 'completed').length,
      firstFactRecalled: results.at(-1)?.answer === `It was ${fact(1)}`,
    };
  } finally {
    await agent.close();
    await scripted.close();
    if (options.env === undefined) await env.teardown();
  }
}
