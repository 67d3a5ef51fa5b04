import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
// Not '../src/testing/index.js': its agent module imports @temporalio/proto by name, which plain Node ESM rejects.
import { createLocalEnvironment } from '../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../src/testing/scripted-model/index.js';
import { drawOverheadChart } from './chart.js';
import { ContenderProcess, replayInFreshProcess } from './contender-process.js';
import { baselineContender } from './baseline.js';
import { CONTENDERS, EXPERIMENTS, FLOOR, IN_PROCESS, type ContenderDefinition } from './contenders/index.js';
import { measureHistory, type ConversationHistory } from './history.js';
import { childProcessIds, describeMachine, loadAverage, processCpuMs } from './machine.js';
import { narrowPlan, PLANS, scalePlan } from './plan.js';
import type { BatchResult } from './protocol.js';
import { renderMarkdown } from './report.js';
import type { ContenderSummary, HistoryFigures, HistorySize, ReplayFigures, Results, RunFigures } from './results.js';
import { mean, percentile, ratio, round } from './stats.js';
import { benchScript, CHAIN_LENGTH, stepsOf, type TurnSpec } from './workload.js';

/**
 * `npm run bench`: durable-agent against an in-process loop, the raw Temporal floor and Temporal's own OpenAI Agents
 * integration, side by side in one run on one dev server, one scripted model and one stdio MCP tool. Writes
 * docs/benchmarks.{json,md} and docs/benchmarks-overhead.svg (with `--quick`: a short run, printed, docs untouched).
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const MIB = 2 ** 20;

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** Most slices a level is split into (see the batch loop). */
const MAX_SLICES = 5;

interface Measured {
  result: BatchResult;
  serverCpuMs: number | undefined;
  modelServerCpuMs: number;
}

/** Two slices of one contender's level as if they had been one batch. */
function mergeMeasured(a: Measured, b: Measured): Measured {
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

/** `items` starting at index `by` (modulo its length), wrapping around. */
function rotate<T>(items: readonly T[], by: number): T[] {
  const start = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}

interface RunningContender {
  definition: ContenderDefinition;
  process: ContenderProcess;
  peakRssBytes: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      peer: { type: 'boolean', default: false },
      'stock-server': { type: 'boolean', default: false },
      eager: { type: 'boolean', default: false },
      experiments: { type: 'boolean', default: false },
      baseline: { type: 'string' },
      scale: { type: 'string' },
      delays: { type: 'string' },
      concurrency: { type: 'string' },
      'cpu-prof': { type: 'string' },
      render: { type: 'boolean', default: false },
      'no-history': { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const narrowed = narrowPlan(values.quick ? PLANS.quick : PLANS.full, values.delays, values.concurrency);
  const plan = values.scale === undefined ? narrowed : scalePlan(narrowed, Number(values.scale));
  const only = values.only?.split(',');
  // Only the full, default run replaces the published figures; every other run writes under bench/dist.
  const variant = [
    values.quick && 'quick',
    values.only && `only-${values.only}`,
    values.delays && `delays-${values.delays}`,
    values.concurrency && `concurrency-${values.concurrency}`,
    values.experiments && 'experiments',
    values.scale && `scale-${values.scale}`,
    values.baseline && `baseline-${values.baseline.replace(/[^\w.-]/g, '_')}`,
    values.eager && 'eager',
    values['stock-server'] && 'stock-server',
    values['no-history'] && 'no-history',
    values.peer && !values.quick && 'peer',
  ]
    .filter(Boolean)
    .join('_');
  const outDir = values.out ?? (variant ? `${root}bench/dist/runs/${variant}` : `${root}docs`);
  const serverArgs = devServerArguments({ stock: values['stock-server'], eager: values.eager });
  if (values.render) {
    // Redraw the table and the chart of an earlier run (e.g. after editing bench/notes.md), measuring nothing.
    const results = JSON.parse(await readFile(`${outDir}/benchmarks.json`, 'utf8')) as Results;
    await writeOutputs(results, outDir);
    return;
  }
  const started = performance.now();
  const loadAtStart = loadAverage();
  const machine = describeMachine();
  log(`${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, load ${loadAtStart.join(' ')}`);

  const problems: string[] = [];
  const summaries = new Map<string, ContenderSummary>();
  const baseline: ContenderDefinition[] = [];
  for (const ref of values.baseline?.split(',') ?? []) baseline.push(await baselineContender(root, ref));
  const definitions = [...CONTENDERS, ...baseline, ...(values.experiments ? EXPERIMENTS : [])].filter(
    (definition) =>
      (only === undefined || only.includes(definition.name) || definition === FLOOR || baseline.includes(definition)) &&
      (!definition.peer || plan.peer || values.peer),
  );

  let model: ScriptedModel | undefined;
  let env: TestWorkflowEnvironment | undefined;
  let historyConnection: Connection | undefined;
  const running: RunningContender[] = [];
  const runs: RunFigures[] = [];
  const history: HistoryFigures[] = [];
  const replay: ReplayFigures[] = [];
  try {
    // Setting up the peer's own node_modules can take a while: do it while the server starts.
    const prepared = Promise.all(
      definitions.map(async (definition) => [definition, await definition.prepare?.()] as const),
    );
    model = await startScriptedModel({ script: benchScript, name: 'the benchmark script' });
    env = await createLocalEnvironment({ extraArgs: serverArgs });
    const serverPid = childProcessIds('start-dev')[0];
    // Histories are measured here, whichever SDK wrote them; a long one can exceed gRPC's default 4 MB message.
    historyConnection = await Connection.connect({
      address: env.address,
      channelArgs: { 'grpc.max_receive_message_length': 512 * MIB },
    });
    const historyClient = new Client({ connection: historyConnection, namespace: env.namespace ?? 'default' });
    const namespace = env.namespace ?? 'default';
    log(`dev server at ${env.address}${serverPid ? ` (pid ${serverPid})` : ''}, scripted model at ${model.baseUrl}`);

    for (const [definition, unavailable] of await prepared) {
      summaries.set(definition.name, { name: definition.name, label: definition.label, available: false });
      if (unavailable !== undefined) {
        summaries.get(definition.name)!.reason = unavailable;
        problems.push(`${definition.name}: ${unavailable}`);
      }
    }
    const startable = definitions.filter((definition) => summaries.get(definition.name)!.reason === undefined);
    // Started one after the other: each bundles its workflow code, and two cores do not bundle three at once faster.
    for (const definition of startable) {
      log(`starting ${definition.name}`);
      try {
        const process = await ContenderProcess.start(
          definition.name,
          definition.script,
          {
            address: env.address,
            namespace,
            modelBaseUrl: model.baseUrl,
            mcpServerScript: `${root}bench/dist/src/testing/mcp-test-server.js`,
            taskQueue: `bench-${definition.name}`,
          },
          definition.env,
          values['cpu-prof']?.split(',').includes(definition.name)
            ? ['--cpu-prof', '--cpu-prof-dir', `${root}bench/dist/profiles`]
            : [],
        );
        running.push({ definition, process, peakRssBytes: 0 });
        Object.assign(summaries.get(definition.name)!, { available: true, startupMs: round(process.startupMs, 0) });
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        Object.assign(summaries.get(definition.name)!, { available: false, reason });
        problems.push(`${definition.name}: ${reason}`);
      }
    }

    const failed = new Set<string>();
    const batch = async (contender: RunningContender, spec: TurnSpec, concurrency: number, turns: number) => {
      const serverBefore = serverPid === undefined ? undefined : processCpuMs(serverPid);
      const parentBefore = process.cpuUsage();
      const result = await contender.process.batch({ turns, concurrency, spec });
      const serverAfter = serverPid === undefined ? undefined : processCpuMs(serverPid);
      const parent = process.cpuUsage(parentBefore);
      model!.reset(benchScript);
      contender.peakRssBytes = Math.max(contender.peakRssBytes, result.peakRssBytes);
      return {
        result,
        serverCpuMs: serverBefore === undefined || serverAfter === undefined ? undefined : serverAfter - serverBefore,
        modelServerCpuMs: (parent.user + parent.system) / 1000,
      };
    };

    for (const contender of running) {
      log(`warming up ${contender.definition.name}`);
      try {
        await batch(contender, { chain: CHAIN_LENGTH, modelDelayMs: 0 }, 2, plan.warmupTurns);
      } catch (error) {
        failed.add(contender.definition.name);
        problems.push(`${contender.definition.name}: warm-up failed: ${String(error)}`);
      }
    }

    // Rotates the contenders' order slice after slice over the whole run: work the server does after a batch (timer
    // tasks of activity timeouts fire seconds later) falls on whoever runs next, so nobody should always be next.
    let sliceCount = 0;
    for (const modelDelayMs of plan.modelDelaysMs) {
      for (const level of plan.levels) {
        const turns = modelDelayMs === 0 ? level.turnsWithoutDelay : level.turnsWithDelay;
        const spec = { chain: CHAIN_LENGTH, modelDelayMs };
        // The turns of a level run in slices (each at least `concurrency` turns), the contenders taking turns slice
        // by slice, so that load drifting on the machine falls on all of them alike.
        const slices = Math.max(1, Math.min(MAX_SLICES, Math.floor(turns / level.concurrency)));
        const measured = new Map<string, Measured>();
        for (let slice = 0; slice < slices; slice++) {
          const sliceTurns = Math.floor(turns / slices) + (slice < turns % slices ? 1 : 0);
          for (const contender of rotate(running, sliceCount++)) {
            const { name } = contender.definition;
            if (failed.has(name)) continue;
            log(
              `${name}: ${sliceTurns} turns, ${level.concurrency} at a time, model delay ${modelDelayMs} ms` +
                (slices > 1 ? ` (slice ${slice + 1} of ${slices})` : ''),
            );
            try {
              const part = await batch(contender, spec, level.concurrency, sliceTurns);
              const sofar = measured.get(name);
              measured.set(name, sofar ? mergeMeasured(sofar, part) : part);
            } catch (error) {
              failed.add(name);
              measured.delete(name);
              problems.push(
                `${name}: batch (delay ${modelDelayMs}, concurrency ${level.concurrency}) failed: ${String(error)}`,
              );
            }
          }
        }
        const level_runs: RunFigures[] = [];
        for (const contender of running) {
          const { name } = contender.definition;
          const figures = measured.get(name);
          if (figures === undefined) continue;
          const { result, serverCpuMs, modelServerCpuMs } = figures;
          level_runs.push(runFigures(name, spec, level.concurrency, result, serverCpuMs, modelServerCpuMs));
        }
        const floor = level_runs.find((run) => run.contender === FLOOR.name);
        const inProcess = level_runs.find((run) => run.contender === IN_PROCESS.name);
        for (const run of level_runs) {
          const added = inProcess && (run.latencyMs.p50 - inProcess.latencyMs.p50) / stepsOf(CHAIN_LENGTH);
          runs.push({
            ...withRunRatios(run, floor),
            addedToInProcessPerStepMs: added === undefined ? null : round(added, 2),
          });
        }
      }
    }

    // `--no-history`: batches only (e.g. for a CPU profile of the steady state).
    const durable = values['no-history']
      ? []
      : running.filter((contender) => contender.definition.durable && !failed.has(contender.definition.name));
    const histories = new Map<string, { oneTurn: ConversationHistory; long?: ConversationHistory }>();
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
        problems.push(`${name}: history measurement failed: ${String(error)}`);
      }
    }
    const floorHistory = histories.get(FLOOR.name);
    const oneTurnSteps = stepsOf(CHAIN_LENGTH);
    const longSteps = plan.longConversation ? sumSteps(plan.longConversation) : 0;
    const floorOne = floorHistory && historySize(floorHistory.oneTurn, oneTurnSteps);
    const floorLong = floorHistory?.long && historySize(floorHistory.long, longSteps);
    for (const [name, measured] of histories) {
      const oneTurn = historySize(measured.oneTurn, oneTurnSteps);
      const long = measured.long && historySize(measured.long, longSteps);
      history.push({
        contender: name,
        oneTurn,
        ...(long ? { long } : {}),
        ratios: {
          oneTurnEventsPerStep: ratio(oneTurn.eventsPerStep, floorOne?.eventsPerStep),
          oneTurnBytesPerStep: ratio(oneTurn.bytesPerStep, floorOne?.bytesPerStep),
          longEventsPerStep: ratio(long?.eventsPerStep, floorLong?.eventsPerStep),
          longBytesPerStep: ratio(long?.bytesPerStep, floorLong?.bytesPerStep),
        },
      });
    }

    if (plan.replayTargetEvents > 0) {
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
          const biggest = measuredLong.runs.reduce((best, run) => (run.events > best.events ? run : best));
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
          problems.push(`${name}: replay failed: ${String(error)}`);
        }
      }
      const floorReplay = replay.find((entry) => entry.contender === FLOOR.name);
      for (const entry of replay) {
        entry.ratios = {
          replayMs: ratio(entry.replayMs, floorReplay?.replayMs),
          coldMs: ratio(entry.coldMs, floorReplay?.coldMs),
        };
      }
    }
  } finally {
    await Promise.allSettled(running.map((contender) => contender.process.close()));
    await model?.close();
    await historyConnection?.close();
    await env?.teardown();
  }

  const floorRss = running.find((contender) => contender.definition === FLOOR)?.peakRssBytes;
  for (const contender of running) {
    Object.assign(summaries.get(contender.definition.name)!, {
      peakRssMiB: round(contender.peakRssBytes / MIB, 0),
      peakRssRatio: ratio(contender.peakRssBytes, floorRss),
    });
  }

  const results: Results = {
    generatedAt: new Date().toISOString(),
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
    quick: values.quick,
    commit: sourceCommit(),
    serverArgs,
    machine,
    load: { start: loadAtStart, end: loadAverage() },
    durationSeconds: round((performance.now() - started) / 1000, 0),
    workload: {
      chain: CHAIN_LENGTH,
      stepsPerTurn: stepsOf(CHAIN_LENGTH),
      modelCallsPerTurn: CHAIN_LENGTH + 1,
      toolCallsPerTurn: CHAIN_LENGTH,
      modelDelaysMs: plan.modelDelaysMs,
      concurrency: plan.levels.map((level) => level.concurrency),
      tool: 'echo of the stdio MCP test server (src/testing/mcp-test-server.ts)',
      longConversationSteps: plan.longConversation ? sumSteps(plan.longConversation) : 0,
      replayTargetEvents: plan.replayTargetEvents,
    },
    contenders: [...summaries.values()],
    runs,
    history,
    replay,
    problems,
  };

  await writeOutputs(results, outDir);
  for (const problem of problems) log(`problem: ${problem}`);
  log(`done in ${results.durationSeconds} s`);
  // A contender that failed is a result to report, but a run where durable-agent itself failed is a failed run.
  if (problems.some((problem) => problem.startsWith('durable-agent') || problem.startsWith(FLOOR.name))) {
    process.exitCode = 1;
  }
}

/**
 * The dev server runs one history shard, and each shard's transfer-queue reader polls at most 20 times a second
 * (`history.transferProcessorMaxPollRPS`): every workflow or activity task then waits up to 50 ms before it is
 * dispatched, about 80 ms per step, which would hide every other cost. A cluster spreads workflows over hundreds of
 * shards; here the limit is raised so that the benchmark measures orchestration. `--stock-server` keeps the default.
 */
function devServerArguments(options: { stock: boolean; eager: boolean }): string[] {
  const values = [
    ...(options.stock ? [] : ['history.transferProcessorMaxPollRPS=1000']),
    // Off by default in the open-source server: the activity comes back in the workflow task's response.
    ...(options.eager ? ['system.enableActivityEagerExecution=true'] : []),
  ];
  return values.flatMap((value) => ['--dynamic-config-value', value]);
}

async function writeOutputs(results: Results, outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  const markdown = await formatMarkdown(renderMarkdown(results), `${outDir}/benchmarks.md`);
  await writeFile(`${outDir}/benchmarks.json`, `${JSON.stringify(results, null, 2)}\n`);
  if (results.quick) {
    process.stdout.write(markdown);
    return;
  }
  await writeFile(`${outDir}/benchmarks.md`, markdown);
  await writeFile(`${outDir}/benchmarks-overhead.svg`, await drawOverheadChart(results));
  log(`wrote ${outDir}/benchmarks.{json,md} and benchmarks-overhead.svg`);
}

/** The table as the project's Prettier would write it, so `prettier --check` passes on the generated file. */
async function formatMarkdown(markdown: string, file: string): Promise<string> {
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(markdown, { ...options, parser: 'markdown' });
}

function sourceCommit(): string {
  if (process.env.BENCH_SOURCE_COMMIT) return process.env.BENCH_SOURCE_COMMIT;
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench'], { cwd: root, encoding: 'utf8' });
    return dirty.trim() === '' ? commit : `${commit} (with uncommitted changes)`;
  } catch {
    return 'unknown';
  }
}

function sumSteps(turns: TurnSpec[]): number {
  return turns.reduce((total, turn) => total + stepsOf(turn.chain), 0);
}

function runFigures(
  contender: string,
  spec: TurnSpec,
  concurrency: number,
  result: BatchResult,
  serverCpuMs: number | undefined,
  modelServerCpuMs: number,
): RunFigures {
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

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
