import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import { DurableAgentClient } from '../../src/client/index.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel } from '../../src/testing/scripted-model/index.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { log } from '../log.js';
import { repoRoot, type BenchOptions } from '../options.js';
import { formatMarkdown } from '../output.js';
import { round } from '../stats.js';
import { baselineCli } from './baseline-worker.js';
import { conversationRuns } from './history.js';
import { longMarkdown, spliceLongSection, type LongResults } from './report.js';
import type { LongRun, LongRunFigures } from './run.js';
import { LONG_RUNS } from './runs.js';
import { runWindowConversation, type WindowRunFigures } from './window-run.js';
import { WorkerProcess } from './worker-process.js';

/** Temporal's limits on one run's history (the defaults of the server and of Temporal Cloud). */
const HISTORY_LIMIT_BYTES = 50 * 1024 * 1024;
const HISTORY_LIMIT_EVENTS = 51_200;
/** The name `--only` knows the conversation past a small window by. */
const WINDOW_RUN = 'window';
/** Turns averaged for the latency at the start and at the end of a conversation. */
const EDGE_TURNS = 5;

/**
 * `npm run bench -- --long`: each run of ./runs.ts (`--only a,b` keeps some) on the built worker (`npm run build`), and
 * with `--baseline <ref>` on that commit's worker too, one after the other on one dev server. Prints the figures and
 * writes docs/benchmarks-long.json and the "Long conversations" section of docs/benchmarks.md (`--out DIR`: there).
 */
export async function runLongBench(options: BenchOptions): Promise<void> {
  if (options.values.render) {
    // `--long --render`: the section again from benchmarks-long.json, measuring nothing.
    const outDir = options.values.out ?? `${repoRoot}docs`;
    const results = JSON.parse(await readFile(path.join(outDir, 'benchmarks-long.json'), 'utf8')) as LongResults;
    return writeLongResults(results, options.values.out);
  }
  const only = options.values.only?.split(',');
  const runs = LONG_RUNS.filter((run) => only === undefined || only.includes(run.name));
  // The conversation past a small window (compaction's), run in the bench's process on the same dev server.
  const withWindow = only === undefined || only.includes(WINDOW_RUN);
  if (runs.length === 0 && !withWindow) {
    const names = [...LONG_RUNS.map((run) => run.name), WINDOW_RUN];
    throw new Error(`--long --only: no such run; runs: ${names.join(', ')}`);
  }
  const builds = [{ build: 'current', cli: `${repoRoot}dist/cli/index.js` }];
  for (const ref of options.values.baseline?.split(',') ?? []) builds.push(await baselineCli(repoRoot, ref));

  const model = await startScriptedModel({ script: [], name: 'the long benchmark' });
  const env = await createLocalEnvironment({ extraArgs: options.serverArgs }).catch(async (error: unknown) => {
    await model.close();
    throw error;
  });
  const connection = await Connection.connect({
    address: env.address,
    channelArgs: { 'grpc.max_receive_message_length': 512 * 1024 * 1024 },
  });
  const figures: LongRunFigures[] = [];
  let window: WindowRunFigures | undefined;
  try {
    const context = {
      address: env.address,
      namespace: env.namespace ?? 'default',
      connection,
      modelBaseUrl: model.baseUrl,
    };
    for (const run of runs) {
      for (const { build, cli } of builds) {
        const directory = await mkdtemp(path.join(os.tmpdir(), `durable-agent-long-${run.name}-`));
        try {
          model.reset(run.script(directory));
          figures.push(await measureRun(run, build, cli, directory, context));
          log(describe(figures.at(-1)!));
        } finally {
          await rm(directory, { recursive: true, force: true });
        }
      }
    }
    if (withWindow) {
      window = await runWindowConversation({ env });
      log(`window: ${JSON.stringify(window)}`);
    }
  } finally {
    await connection.close();
    await env.teardown();
    await model.close();
  }
  const date = new Date().toISOString().slice(0, 10);
  await writeLongResults({ date, figures, ...(window ? { window } : {}) }, options.values.out);
}

/**
 * benchmarks-long.json into `out` (default docs/), and its section into the benchmarks.md there when there is one: a
 * run of `--long --only` writes under bench/dist/runs/long instead, so the published figures are always whole.
 */
async function writeLongResults(results: LongResults, out: string | undefined): Promise<void> {
  const outDir = out ?? `${repoRoot}docs`;
  await mkdir(outDir, { recursive: true });
  await writeFile(path.join(outDir, 'benchmarks-long.json'), JSON.stringify(results, null, 2) + '\n');
  const page = path.join(outDir, 'benchmarks.md');
  const markdown = await readFile(page, 'utf8').catch(() => undefined);
  if (markdown !== undefined) {
    await writeFile(page, await formatMarkdown(spliceLongSection(markdown, longMarkdown(results)), page));
  }
  log(
    `wrote ${path.join(outDir, 'benchmarks-long.json')}${markdown === undefined ? '' : ' and its section of benchmarks.md'}`,
  );
}

async function measureRun(
  run: LongRun,
  build: string,
  cli: string,
  directory: string,
  context: { address: string; namespace: string; connection: Connection; modelBaseUrl: string },
): Promise<LongRunFigures> {
  const taskQueue = `long-${run.name}-${build.replace(/\W+/g, '-')}`;
  const worker = await WorkerProcess.start(cli, {
    ...process.env,
    TEMPORAL_ADDRESS: context.address,
    TEMPORAL_NAMESPACE: context.namespace,
    OPENAI_BASE_URL: context.modelBaseUrl,
    OPENAI_API_KEY: 'long-benchmark',
    DURABLE_AGENT_MODEL: 'scripted-model',
    DURABLE_AGENT_TASK_QUEUE: taskQueue,
    ...(await run.workerEnvironment(directory)),
  });
  try {
    const historyClient = new Client({ connection: context.connection, namespace: context.namespace });
    const client = new DurableAgentClient({ client: historyClient, taskQueue });
    const latencies: number[] = [];
    const cpuBefore = worker.cpuMs();
    const started = performance.now();
    log(`${run.name} (${build}): ${run.label}`);
    const conversed = await run.converse({
      client,
      historyClient,
      log,
      turn: async (work) => {
        const start = performance.now();
        const result = await work();
        latencies.push(performance.now() - start);
        return result;
      },
    });
    const wallSeconds = (performance.now() - started) / 1000;
    const cpuAfter = worker.cpuMs();
    const runs = await conversationRuns(historyClient, conversationWorkflowId(conversed.conversationId));
    const largest = runs.reduce((best, entry) => (entry.bytes > best.bytes ? entry : best));
    const mostEvents = Math.max(...runs.map((entry) => entry.events));
    const historyBytes = runs.reduce((sum, entry) => sum + entry.bytes, 0);
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
    return {
      name: run.name,
      label: run.label,
      build,
      turns: conversed.turns,
      steps: conversed.steps,
      historyBytes,
      historyEvents: runs.reduce((sum, entry) => sum + entry.events, 0),
      runs: runs.length,
      bytesPerStep: round(historyBytes / conversed.steps, 0),
      resultBytes: conversed.resultBytes,
      bytesPerStepToResult: round(historyBytes / conversed.steps / conversed.resultBytes, 3),
      largestRun: {
        bytes: largest.bytes,
        events: mostEvents,
        bytesShareOfLimit: round(largest.bytes / HISTORY_LIMIT_BYTES, 4),
        eventsShareOfLimit: round(mostEvents / HISTORY_LIMIT_EVENTS, 4),
      },
      turnLatencyMs: {
        start: round(mean(latencies.slice(0, EDGE_TURNS)), 0),
        end: round(mean(latencies.slice(-EDGE_TURNS)), 0),
      },
      workerCpuMsPerStep:
        cpuBefore === undefined || cpuAfter === undefined
          ? undefined
          : round((cpuAfter - cpuBefore) / conversed.steps, 2),
      compactions: runs.reduce((sum, entry) => sum + entry.compactions, 0),
      carriedBytes: runs.slice(1).reduce((sum, entry) => sum + entry.startBytes, 0),
      wallSeconds: round(wallSeconds, 1),
    };
  } catch (error) {
    log(`${run.name} (${build}) failed; the worker's latest output:\n${worker.log}`);
    throw error;
  } finally {
    await worker.stop();
  }
}

function describe(figures: LongRunFigures): string {
  const percent = (share: number) => `${round(share * 100, 1)}%`;
  return (
    `${figures.name} (${figures.build}): ${figures.steps} steps in ${figures.turns} turns, ${figures.runs} runs; ` +
    `history ${figures.bytesPerStep} B per step (${figures.bytesPerStepToResult}x the ${figures.resultBytes} B result); ` +
    `largest run ${figures.largestRun.bytes} B (${percent(figures.largestRun.bytesShareOfLimit)} of 50 MB), ` +
    `${figures.largestRun.events} events (${percent(figures.largestRun.eventsShareOfLimit)} of 51,200); ` +
    `turn latency ${figures.turnLatencyMs.start} ms at the start, ${figures.turnLatencyMs.end} ms at the end; ` +
    `worker CPU ${figures.workerCpuMsPerStep ?? '?'} ms per step; carried state ${figures.carriedBytes} B; ` +
    `${figures.compactions} compactions; ${figures.wallSeconds} s`
  );
}
