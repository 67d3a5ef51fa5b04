import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import { startScriptedModel } from '../../src/testing/scripted-model/index.js';
import { ContenderProcess } from '../contender-process.js';
import { CONTENDERS, EXPERIMENTS, FLOOR, type ContenderDefinition } from '../contenders/index.js';
import { MIB } from '../figures.js';
import { log } from '../log.js';
import { describeMachine, loadAverage } from '../machine.js';
import { repoRoot, type BenchOptions } from '../options.js';
import { formatMarkdown, sourceCommit } from '../output.js';
import type { BatchResult } from '../protocol.js';
import { percentile, round } from '../stats.js';
import { benchScript, CHAIN_LENGTH, stepsOf, type TurnSpec } from '../workload.js';
import { addActions, billableInHistory, countAllActions, NO_ACTIONS, type HistoryActions } from './actions.js';
import { productionMarkdown, spliceSection } from './report.js';
import { SERVER_ROLES, ProductionStack } from './stack.js';
import {
  difference,
  sampleCpu,
  sampleDatabase,
  sampleMetrics,
  type DatabaseSample,
  type MetricsSample,
} from './sample.js';

/**
 * `npm run bench -- --stack production`: durable-agent and the raw Temporal floor on the native production stack
 * (scripts/production-stack.mjs: PostgreSQL and Temporal Server's four services as processes of their own), each with
 * two worker processes on one task queue, `--conversations` conversations at a time against a scripted model that
 * answers in 1–4 s. The contenders take turns phase by phase (floor, durable-agent, durable-agent, floor, …), and
 * around each phase the benchmark reads the CPU time of every process from /proc, PostgreSQL's rows and WAL written
 * and the frontend's request counters; afterwards it counts billable actions in every turn's history. Writes
 * docs/benchmarks-production.json and the "Production stack" section of docs/benchmarks.md (other outputs with `--out`).
 */

export interface ProductionPlan {
  conversations: number;
  /** Turns each conversation slot runs one after the other in a phase (so a phase has a steady state, not one burst). */
  turnsPerSlot: number;
  /** Phases per contender; the order alternates (A B B A …). */
  rounds: number;
  spec: TurnSpec;
  workersPerContender: number;
  /** After a phase, before the counters are read: PostgreSQL's statistics flush, activity timeout timers fire. */
  settleMs: number;
}

export interface PhaseFigures {
  contender: string;
  turns: number;
  steps: number;
  wallMs: number;
  load: [number, number, number];
  overheadPerStepMs: number[];
  turnLatencyMs: number[];
  /** CPU ms of each process tree during the phase and its settling: the workers and each server process. */
  cpuMs: Record<string, number>;
  rowsWritten: number;
  tables: Record<string, number>;
  walBytes: number;
  requests: Record<string, number>;
  serverActions: Record<string, number>;
  history: HistoryActions;
}

export interface ContenderFigures {
  name: string;
  label: string;
  turns: number;
  steps: number;
  stepsPerSecond: number;
  overheadP50Ms: number;
  overheadP99Ms: number;
  turnP50Ms: number;
  turnP99Ms: number;
  /** CPU ms per step, per process (worker = both worker processes with their MCP servers). */
  cpuPerStepMs: Record<string, number>;
  serverCpuPerStepMs: number;
  rowsPerStep: number;
  walBytesPerStep: number;
  eventsPerStep: number;
  heartbeatsPerStep: number;
  queriesPerStep: number;
  /** Billable actions per step: from history, plus heartbeats and queries counted at the frontend. */
  actionsPerStep: number;
  /** The server's own `action` metric, per step. */
  serverActionsPerStep: number;
  /** The server's `action` metric by action_type, per turn. */
  serverActionsPerTurn: Record<string, number>;
  historyActions: HistoryActions;
  heartbeats: number;
  topTables: [string, number][];
  peakRssMiB: number;
}

export interface ProductionResults {
  generatedAt: string;
  command: string;
  commit: string;
  machine: ReturnType<typeof describeMachine>;
  load: { start: [number, number, number]; end: [number, number, number] };
  durationSeconds: number;
  plan: ProductionPlan;
  idle: { seconds: number; cpuMsPerSecond: Record<string, number> };
  contenders: ContenderFigures[];
  phases: PhaseFigures[];
  problems: string[];
}

const HEARTBEAT_OPERATIONS = ['RecordActivityTaskHeartbeat', 'RecordActivityTaskHeartbeatById'];
const QUERY_OPERATIONS = ['QueryWorkflow'];

export function productionPlan(options: BenchOptions): ProductionPlan {
  const conversations = Number(options.values.conversations ?? 200);
  const chain = Number(options.values.chain ?? CHAIN_LENGTH);
  const rounds = Number(options.values.rounds ?? 2);
  if (!(conversations >= 2) || !(chain >= 1) || !(rounds >= 1)) {
    throw new Error('--conversations (≥ 2), --chain (≥ 1) and --rounds (≥ 1) take positive whole numbers');
  }
  return {
    conversations,
    turnsPerSlot: Number(options.values.turns ?? 1),
    rounds,
    spec: { chain, modelDelayMs: 1_000, modelDelayMaxMs: 4_000 },
    workersPerContender: 2,
    settleMs: 12_000,
  };
}

interface RunningPair {
  definition: ContenderDefinition;
  workers: ContenderProcess[];
  peakRssBytes: number;
}

export async function runProductionBench(options: BenchOptions): Promise<void> {
  const started = performance.now();
  const plan = productionPlan(options);
  const machine = describeMachine();
  const loadAtStart = loadAverage();
  log(`${machine.cores} cores, load ${loadAtStart.join(' ')}; production stack, ${plan.conversations} conversations`);
  const reuse = options.values['stack-dir'] !== undefined;
  const dir = reuse ? path.resolve(options.values['stack-dir']!) : await newStackDir();
  const model = await startScriptedModel({ script: benchScript, name: 'the benchmark script' });
  const problems: string[] = [];
  let stack: ProductionStack | undefined;
  let connection: Connection | undefined;
  const pairs: RunningPair[] = [];
  const phases: PhaseFigures[] = [];
  let idle: ProductionResults['idle'] = { seconds: 0, cpuMsPerSecond: {} };
  try {
    stack = await ProductionStack.open(dir, reuse);
    log(`production stack in ${dir} at ${stack.address}`);
    connection = await Connection.connect({
      address: stack.address,
      channelArgs: { 'grpc.max_receive_message_length': 512 * MIB },
    });
    const client = new Client({ connection, namespace: 'default' });
    const durableAgent = CONTENDERS.find((definition) => definition.name === 'durable-agent')!;
    // `--experiments`: a variant of durable-agent beside (`--only` names which; default: its heartbeats dropped), to see
    // what one cost comes to on this stack.
    const experiments = options.values.experiments ? productionExperiments(options) : [];
    for (const definition of [FLOOR, durableAgent, ...experiments]) {
      const workers: ContenderProcess[] = [];
      pairs.push({ definition, workers, peakRssBytes: 0 });
      for (let index = 0; index < plan.workersPerContender; index++) {
        log(`starting ${definition.name} worker ${index + 1}`);
        workers.push(
          await ContenderProcess.start(
            `${definition.name}#${index + 1}`,
            definition.script,
            {
              address: stack.address,
              namespace: 'default',
              modelBaseUrl: model.baseUrl,
              mcpServerScript: `${repoRoot}bench/dist/src/testing/mcp-test-server.js`,
              taskQueue: `bench-production-${definition.name}`,
            },
            definition.env,
          ),
        );
      }
    }
    for (const pair of pairs) {
      log(`warming up ${pair.definition.name}`);
      await Promise.all(
        pair.workers.map((worker) => worker.batch({ turns: 4, concurrency: 2, spec: { chain: 1, modelDelayMs: 0 } })),
      );
    }
    await sleep(plan.settleMs);
    idle = await measureIdle(stack, pairs, 10);
    const order = phaseOrder(pairs, plan.rounds);
    for (const [index, pair] of order.entries()) {
      log(
        `phase ${index + 1} of ${order.length}: ${pair.definition.name}, ${plan.conversations} conversations, ` +
          `${plan.turnsPerSlot} turns each, load ${loadAverage().join(' ')}`,
      );
      phases.push(await runPhase(stack, pair, plan, problems));
      model.reset(benchScript);
    }
    log('counting billable actions in the histories');
    for (const phase of phases) {
      const executions = (phase as PhaseFigures & { executions?: Execution[] }).executions ?? [];
      phase.history = await countAllActions(client, executions);
      delete (phase as PhaseFigures & { executions?: Execution[] }).executions;
    }
  } finally {
    await Promise.allSettled(pairs.flatMap((pair) => pair.workers.map((worker) => worker.close())));
    await connection?.close();
    await model.close();
    await stack?.close().catch((error: unknown) => problems.push(`stack down: ${String(error)}`));
    // A stack this run brought up is gone with its data (about half a GB after a full run), logs included.
    if (!reuse && problems.length === 0) await rm(path.dirname(dir), { recursive: true, force: true });
  }

  const results: ProductionResults = {
    generatedAt: new Date().toISOString(),
    command: ['npm run bench', '--', ...process.argv.slice(2)].join(' '),
    commit: sourceCommit(),
    machine,
    load: { start: loadAtStart, end: loadAverage() },
    durationSeconds: round((performance.now() - started) / 1000, 0),
    plan,
    idle,
    contenders: pairs.map((pair) =>
      summarise(
        pair,
        phases.filter((phase) => phase.contender === pair.definition.name),
      ),
    ),
    phases,
    problems,
  };
  await writeResults(results, options);
  for (const problem of problems) log(`problem: ${problem}`);
  if (problems.length > 0) process.exitCode = 1;
}

type Execution = { workflowId: string; runId: string };

async function newStackDir(): Promise<string> {
  // Under /tmp, not a home directory: as root the stack runs PostgreSQL as the `postgres` user, who must reach DIR.
  const parent = await mkdtemp(path.join(os.tmpdir(), 'bench-production-'));
  chmodSync(parent, 0o755);
  return path.join(parent, 'stack');
}

/** A B B A A B …: each contender as often first as second after the other, so leftovers of a phase fall on both. */
function phaseOrder<T>(pairs: T[], rounds: number): T[] {
  const order: T[] = [];
  for (let round = 0; round < rounds; round++) order.push(...(round % 2 === 0 ? pairs : [...pairs].reverse()));
  return order;
}

function cpuRoots(stack: ProductionStack, pair: RunningPair | undefined, all: RunningPair[]): Record<string, number[]> {
  const roots: Record<string, number[]> = {};
  for (const role of SERVER_ROLES) roots[role] = [stack.process(role).pid];
  if (pair) roots.worker = pair.workers.flatMap((worker) => (worker.pid === undefined ? [] : [worker.pid]));
  else
    for (const other of all)
      roots[`worker:${other.definition.name}`] = other.workers.flatMap((w) => (w.pid ? [w.pid] : []));
  return roots;
}

/** The stack's CPU with every worker polling and no conversation: what the server spends doing nothing. */
async function measureIdle(stack: ProductionStack, pairs: RunningPair[], seconds: number) {
  const roots = cpuRoots(stack, undefined, pairs);
  const before = sampleCpu(roots);
  await sleep(seconds * 1000);
  const after = sampleCpu(roots);
  const cpuMsPerSecond = Object.fromEntries(
    Object.keys(roots).map((name) => [name, round((after[name]! - before[name]!) / seconds, 1)]),
  );
  log(`idle: ${JSON.stringify(cpuMsPerSecond)} CPU ms/s`);
  return { seconds, cpuMsPerSecond };
}

async function runPhase(
  stack: ProductionStack,
  pair: RunningPair,
  plan: ProductionPlan,
  problems: string[],
): Promise<PhaseFigures> {
  const roots = cpuRoots(stack, pair, []);
  const visibilityUrl = stack.process('postgres').visibilityUrl;
  const metricsUrls = stack.metricsUrls();
  const dbBefore = await sampleDatabase(stack.databaseUrl, visibilityUrl);
  const metricsBefore = await sampleMetrics(metricsUrls);
  const cpuBefore = sampleCpu(roots);
  const startedAt = performance.now();
  const perWorker = Math.ceil(plan.conversations / pair.workers.length);
  const results = await Promise.allSettled(
    pair.workers.map((worker) =>
      worker.batch({ turns: perWorker * plan.turnsPerSlot, concurrency: perWorker, spec: plan.spec }),
    ),
  );
  const wallMs = performance.now() - startedAt;
  const load = loadAverage();
  await sleep(plan.settleMs);
  // A turn's calls ran on either worker: add what the other one timed for it.
  const elsewhere: Record<string, number> = {};
  for (const worker of pair.workers) {
    for (const [key, ms] of Object.entries(await worker.drain())) elsewhere[key] = (elsewhere[key] ?? 0) + ms;
  }
  const workOf = (sample: BatchResult['samples'][number]) =>
    sample.workMs + (sample.execution ? (elsewhere[sample.execution.workflowId] ?? 0) : 0);
  const cpuAfter = sampleCpu(roots);
  const metricsAfter = await sampleMetrics(metricsUrls);
  const dbAfter = await sampleDatabase(stack.databaseUrl, visibilityUrl);
  const batches: BatchResult[] = [];
  for (const result of results) {
    if (result.status === 'fulfilled') batches.push(result.value);
    else problems.push(`${pair.definition.name}: ${String(result.reason)}`);
  }
  const samples = batches.flatMap((batch) => batch.samples);
  pair.peakRssBytes = Math.max(pair.peakRssBytes, ...batches.map((batch) => batch.peakRssBytes));
  const steps = stepsOf(plan.spec.chain);
  const figures: PhaseFigures & { executions: Execution[] } = {
    contender: pair.definition.name,
    turns: samples.length,
    steps: samples.length * steps,
    wallMs: round(wallMs, 0),
    load,
    overheadPerStepMs: samples.map((sample) => round((sample.latencyMs - workOf(sample)) / steps, 2)),
    turnLatencyMs: samples.map((sample) => round(sample.latencyMs, 0)),
    cpuMs: Object.fromEntries(Object.keys(roots).map((name) => [name, round(cpuAfter[name]! - cpuBefore[name]!, 0)])),
    ...databaseDifference(dbAfter, dbBefore),
    ...metricsDifference(metricsAfter, metricsBefore),
    history: NO_ACTIONS,
    executions: samples.flatMap((sample) => (sample.execution ? [sample.execution] : [])),
  };
  log(
    `${pair.definition.name}: ${figures.turns} turns in ${round(wallMs / 1000, 1)} s, CPU ms ${JSON.stringify(figures.cpuMs)}, ` +
      `rows ${figures.rowsWritten}, WAL ${round(figures.walBytes / MIB, 1)} MiB, load ${load.join(' ')}`,
  );
  return figures;
}

function databaseDifference(after: DatabaseSample, before: DatabaseSample) {
  return {
    rowsWritten: after.rows - before.rows,
    tables: difference(after.tables, before.tables),
    walBytes: Number(after.walBytes - before.walBytes),
  };
}

function metricsDifference(after: MetricsSample, before: MetricsSample) {
  return {
    requests: difference(after.frontendRequests, before.frontendRequests),
    serverActions: difference(after.actions, before.actions),
  };
}

const sumOf = (values: number[]) => values.reduce((total, value) => total + value, 0);
const sumKeys = (record: Record<string, number>, keys: readonly string[]) => sumOf(keys.map((key) => record[key] ?? 0));

function summarise(pair: RunningPair, phases: PhaseFigures[]): ContenderFigures {
  const steps = sumOf(phases.map((phase) => phase.steps));
  const per = (value: number) => (steps === 0 ? Number.NaN : value / steps);
  const cpu: Record<string, number> = {};
  for (const phase of phases) for (const [name, ms] of Object.entries(phase.cpuMs)) cpu[name] = (cpu[name] ?? 0) + ms;
  const history = phases.reduce((total, phase) => addActions(total, phase.history), NO_ACTIONS);
  const requests: Record<string, number> = {};
  for (const phase of phases)
    for (const [op, n] of Object.entries(phase.requests)) requests[op] = (requests[op] ?? 0) + n;
  const heartbeats = sumKeys(requests, HEARTBEAT_OPERATIONS);
  const queries = sumKeys(requests, QUERY_OPERATIONS);
  const serverActions = sumOf(phases.flatMap((phase) => Object.values(phase.serverActions)));
  const serverActionTypes: Record<string, number> = {};
  for (const phase of phases) {
    for (const [type, n] of Object.entries(phase.serverActions))
      serverActionTypes[type] = (serverActionTypes[type] ?? 0) + n;
  }
  const turns = sumOf(phases.map((phase) => phase.turns));
  const tables: Record<string, number> = {};
  for (const phase of phases) for (const [t, n] of Object.entries(phase.tables)) tables[t] = (tables[t] ?? 0) + n;
  const overhead = phases.flatMap((phase) => phase.overheadPerStepMs);
  const latency = phases.flatMap((phase) => phase.turnLatencyMs);
  const wallMs = sumOf(phases.map((phase) => phase.wallMs));
  return {
    name: pair.definition.name,
    label: pair.definition.label,
    turns,
    steps,
    stepsPerSecond: round(steps / (wallMs / 1000), 1),
    overheadP50Ms: round(percentile(overhead, 50), 1),
    overheadP99Ms: round(percentile(overhead, 99), 1),
    turnP50Ms: round(percentile(latency, 50), 0),
    turnP99Ms: round(percentile(latency, 99), 0),
    cpuPerStepMs: Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [name, round(per(ms), 3)])),
    serverCpuPerStepMs: round(per(sumKeys(cpu, SERVER_ROLES)), 3),
    rowsPerStep: round(per(sumOf(phases.map((phase) => phase.rowsWritten))), 2),
    walBytesPerStep: round(per(sumOf(phases.map((phase) => phase.walBytes))), 0),
    eventsPerStep: round(per(history.events), 2),
    heartbeatsPerStep: round(per(heartbeats), 3),
    queriesPerStep: round(per(queries), 3),
    actionsPerStep: round(per(billableInHistory(history) + heartbeats + queries), 3),
    serverActionsPerStep: round(per(serverActions), 3),
    serverActionsPerTurn: Object.fromEntries(
      Object.entries(serverActionTypes).map(([type, n]) => [type, round(n / turns, 2)]),
    ),
    historyActions: history,
    heartbeats,
    topTables: Object.entries(tables)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([table, rows]) => [table, round(per(rows), 2)]),
    peakRssMiB: round(pair.peakRssBytes / MIB, 0),
  };
}

export async function writeResults(results: ProductionResults, options: BenchOptions): Promise<void> {
  const outDir = productionOutDir(options);
  await mkdir(outDir, { recursive: true });
  await writeFile(`${outDir}/benchmarks-production.json`, `${JSON.stringify(results, null, 2)}\n`);
  const section = productionMarkdown(results);
  const markdownPath = `${outDir}/benchmarks.md`;
  let markdown = '';
  try {
    markdown = await readFile(markdownPath, 'utf8');
  } catch {
    // A new --out directory: the section alone.
  }
  await writeFile(markdownPath, await formatMarkdown(spliceSection(markdown, section), markdownPath));
  process.stdout.write(`${section}\n`);
  log(`wrote ${outDir}/benchmarks-production.json and its section of ${markdownPath}`);
}

/** The `--experiments` variants of a production run: those `--only` names, else `durable-agent-no-heartbeats`. */
function productionExperiments(options: BenchOptions): ContenderDefinition[] {
  const names = options.values.only?.split(',') ?? ['durable-agent-no-heartbeats'];
  const chosen = EXPERIMENTS.filter((definition) => names.includes(definition.name));
  if (chosen.length === 0) {
    throw new Error(`--experiments --only: one of ${EXPERIMENTS.map((definition) => definition.name).join(', ')}`);
  }
  return chosen;
}

/** docs/, unless `--out` says otherwise; a run with `--experiments` under bench/dist/runs. */
export function productionOutDir(options: BenchOptions): string {
  const only = options.values.only === undefined ? '' : `_${options.values.only.replace(/,/g, '-')}`;
  const variant = options.values.experiments
    ? `${repoRoot}bench/dist/runs/production_experiments${only}`
    : `${repoRoot}docs`;
  return options.values.out ?? variant;
}

/** `--stack production --render`: the section again from benchmarks-production.json (after editing bench/production/report.ts). */
export async function renderProduction(options: BenchOptions): Promise<void> {
  const outDir = productionOutDir(options);
  const results = JSON.parse(await readFile(`${outDir}/benchmarks-production.json`, 'utf8')) as ProductionResults;
  await writeResults(results, options);
}
