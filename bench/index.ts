import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { FLOOR, type ContenderDefinition } from './contenders/index.js';
import { measureFirstToken } from './first-token/index.js';
import { historyFigures, MIB, missingFigures, withReplayRatios } from './figures.js';
import { measureHistories, measureReplays } from './history-and-replay.js';
import { runLevels, warmUp } from './levels.js';
import { log } from './log.js';
import { describeMachine, loadAverage } from './machine.js';
import { chooseContenders, readOptions, repoRoot, type BenchOptions } from './options.js';
import { assembleResults, writeOutputs, type RunRecord } from './output.js';
import type { ContenderSummary, Results } from './results.js';
import { ratio, round } from './stats.js';
import { Workbench, type RunContext, type RunningContender } from './workbench.js';

/**
 * `npm run bench`: durable-agent against an in-process loop, the raw Temporal floor and Temporal's own OpenAI Agents
 * integration, side by side in one run on one dev server, one scripted model and one stdio MCP tool. Writes
 * docs/benchmarks.{json,md} and docs/benchmarks-overhead.svg (with `--quick`: a short run, printed, docs untouched).
 */

async function main(): Promise<void> {
  const options = readOptions();
  if (options.values.stack !== undefined) {
    if (options.values.stack !== 'production')
      throw new RunRefused(`--stack: only "production" (got "${options.values.stack}")`);
    // Its own run: the production stack instead of the dev server (bench/production/run.ts).
    const { renderProduction, runProductionBench } = await import('./production/run.js');
    await (options.values.render ? renderProduction(options) : runProductionBench(options));
    return;
  }
  if (options.values.long) {
    // Its own run: long conversations, one at a time, on the built worker (bench/long/).
    const { runLongBench } = await import('./long/index.js');
    await runLongBench(options);
    return;
  }
  if (options.values.tenants) {
    // Its own run: the noisy neighbour, fairness on and off (bench/tenants/run.ts).
    const { runTenantsBench } = await import('./tenants/run.js');
    await runTenantsBench(options);
    return;
  }
  if (options.values.render) {
    // Redraw the table and the chart of an earlier run (e.g. after editing bench/notes.md), measuring nothing.
    const results = JSON.parse(await readFile(`${options.outDir}/benchmarks.json`, 'utf8')) as Results;
    await writeOutputs(results, options.outDir);
    return;
  }
  const started = performance.now();
  const loadAtStart = loadAverage();
  const machine = describeMachine();
  log(`${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, load ${loadAtStart.join(' ')}`);

  const definitions = await chooseContenders(options);
  const summaries = new Map<string, ContenderSummary>();
  const problems: string[] = [];
  const running: RunningContender[] = [];
  let workbench: Workbench | undefined;
  let figures: Pick<RunRecord, 'runs' | 'history' | 'replay' | 'firstToken'>;
  try {
    // Setting up the peer's own node_modules can take a while: do it while the server starts. Never rejects.
    const prepared = Promise.all(
      definitions.map(async (definition) => [definition, await definition.prepare?.()] as const),
    );
    workbench = await Workbench.open(options.serverArgs);
    for (const [definition, unavailable] of await prepared) {
      if (unavailable !== undefined) throw new RunRefused(cannotRun(definition, unavailable));
    }
    await startContenders(workbench, definitions, options, { running, summaries });
    figures = await measure({ workbench, running, failed: new Set(), problems }, options, summaries);
  } finally {
    await Promise.allSettled(running.map((contender) => contender.process.close()));
    await workbench?.close();
  }

  const floorRss = running.find((contender) => contender.definition === FLOOR)?.peakRssBytes;
  for (const contender of running) {
    Object.assign(summaries.get(contender.definition.name)!, {
      peakRssMiB: round(contender.peakRssBytes / MIB, 0),
      peakRssRatio: ratio(contender.peakRssBytes, floorRss),
    });
  }
  const results = assembleResults({
    quick: options.values.quick,
    serverArgs: options.serverArgs,
    plan: options.plan,
    machine,
    load: { start: loadAtStart, end: loadAverage() },
    durationMs: performance.now() - started,
    contenders: [...summaries.values()],
    ...figures,
    problems,
  });
  await writeOutputs(results, options.outDir);
  for (const problem of problems) log(`problem: ${problem}`);
  log(`done in ${results.durationSeconds} s`);
  // Every contender asked for must bring figures for every level. A failed history or replay is a finding about that
  // contender, unless it is durable-agent's or the floor's.
  const missing = missingFigures(
    definitions.map((definition) => definition.name),
    options.plan,
    results.runs,
  );
  for (const figures of missing) log(`FAILED: no figures from ${figures} (see the problems above)`);
  const ownFailed = problems.some((problem) => problem.startsWith('durable-agent') || problem.startsWith(FLOOR.name));
  if (missing.length > 0 || ownFailed) process.exitCode = 1;
}

/** A run that cannot go on, said in words: printed without a stack trace. */
class RunRefused extends Error {}

/** Why a contender cannot run, and for the peer how to measure without it (a run that says so in its name). */
function cannotRun(definition: ContenderDefinition, reason: string): string {
  const withoutIt = definition.peer ? '\nTo measure without it: npm run bench -- --no-peer' : '';
  return `${definition.name} cannot run, so the benchmark stops before measuring anything: ${reason}${withoutIt}`;
}

/**
 * Started one after the other: each bundles its workflow code, and two cores do not bundle three at once faster.
 * A contender that cannot start stops the run (the ones started are in `into.running`, for the caller to close).
 */
async function startContenders(
  workbench: Workbench,
  definitions: ContenderDefinition[],
  options: BenchOptions,
  into: { running: RunningContender[]; summaries: Map<string, ContenderSummary> },
): Promise<void> {
  const profiled = options.values['cpu-prof']?.split(',') ?? [];
  for (const definition of definitions) {
    log(`starting ${definition.name}`);
    try {
      const execArgv = profiled.includes(definition.name)
        ? ['--cpu-prof', '--cpu-prof-dir', `${repoRoot}bench/dist/profiles`]
        : [];
      const process = await workbench.startContender(definition, execArgv);
      into.running.push({ definition, process, peakRssBytes: 0 });
      const { name, label } = definition;
      into.summaries.set(name, { name, label, available: true, startupMs: round(process.startupMs, 0) });
    } catch (error) {
      throw new RunRefused(cannotRun(definition, error instanceof Error ? error.message : String(error)));
    }
  }
}

/**
 * Warm-up, the levels, the first token, then the histories and the replays of the durable contenders that did not
 * fail.
 */
async function measure(run: RunContext, options: BenchOptions, summaries: Map<string, ContenderSummary>) {
  const { plan } = options;
  await warmUp(run, plan);
  const runs = await runLevels(run, plan);
  const firstToken = plan.firstToken ? await measureFirstToken(run, plan.firstToken) : [];
  if (options.values['first-token']) return { runs, history: [], replay: [], firstToken };
  // `--no-history`: batches only (e.g. for a CPU profile of the steady state).
  const durable = options.values['no-history']
    ? []
    : run.running.filter((contender) => contender.definition.durable && !run.failed.has(contender.definition.name));
  const histories = await measureHistories(run, durable, plan, summaries);
  const history = historyFigures(histories, plan);
  const replay =
    plan.replayTargetEvents > 0 ? withReplayRatios(await measureReplays(run, durable, plan, histories)) : [];
  return { runs, history, replay, firstToken };
}

main().catch((error: unknown) => {
  if (error instanceof RunRefused) log(error.message);
  else log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
