import { FLOOR, IN_PROCESS } from './contenders/index.js';
import { number, table, times } from './markdown.js';
import type { Results, RunFigures } from './results.js';

/**
 * The goals durable-agent's benchmark holds it to, judged from one run's figures: per-step overhead against the raw
 * Temporal floor, the worker's CPU per step, what encryption costs, the peer, peak memory and the first token. Each
 * level of the run is one row, so a run says by itself which goal it met where, instead of a reader working it out
 * from the tables.
 */

const PLAIN = 'durable-agent';
const ENCRYPTED = 'durable-agent-encrypted';
const PEER = 'openai-agents';

/** Overhead per step as a multiple of the floor's: at one conversation, and at every other level. */
const OVERHEAD_GOAL = { single: 1.1, concurrent: 1.25 };
/** The worker's CPU per step as a multiple of the floor's worker. */
const WORKER_CPU_GOAL = 1.3;
/** Overhead per step of the encrypted worker as a multiple of the plain one's. */
const ENCRYPTION_GOAL = 1.15;
/** Peak resident memory as a multiple of the floor's. */
const PEAK_RSS_GOAL = 1.5;

export interface LevelGoals {
  modelDelayMs: number;
  concurrency: number;
  /** durable-agent's overhead per step (p50) ÷ the floor's, and the goal for this level. */
  overhead: Judged;
  /** durable-agent's worker CPU per step ÷ the floor's worker CPU per step. */
  workerCpu: Judged;
  /**
   * (the floor's worker CPU + the in-process loop's CPU) ÷ the floor's, per step: what a worker would spend that did
   * exactly what the floor does plus the model and tool calls, made with the same clients, and nothing else. No
   * contender that makes these calls through these clients can go below it.
   */
  callsAloneCpu: number | null;
  /** The encrypted worker's overhead per step ÷ the plain one's. */
  encryption: Judged;
  /** durable-agent's overhead per step ÷ the peer's, plain and encrypted (below 1 is ahead of the peer). */
  peerPlain: Judged;
  peerEncrypted: Judged;
}

export interface Judged {
  value: number | null;
  goal: number;
  /** Null when the run did not measure it (a contender missing). */
  met: boolean | null;
}

export interface GoalSummary {
  levels: LevelGoals[];
  peakRss: { plain: Judged; encrypted: Judged };
  met: number;
  checked: number;
}

function judged(value: number | null | undefined, goal: number, strictlyBelow = false): Judged {
  if (value === null || value === undefined || !Number.isFinite(value)) return { value: null, goal, met: null };
  return { value, goal, met: strictlyBelow ? value < goal : value <= goal };
}

function runOf(results: Results, contender: string, like: RunFigures): RunFigures | undefined {
  return results.runs.find(
    (run) =>
      run.contender === contender && run.modelDelayMs === like.modelDelayMs && run.concurrency === like.concurrency,
  );
}

/** The worker's CPU per step as a multiple of the floor's in the same level (ratios are computed, not stored). */
export function workerCpuRatio(results: Results, run: RunFigures): number | null {
  const floor = runOf(results, FLOOR.name, run);
  return floor && floor.cpuPerStepMs.contender > 0 ? run.cpuPerStepMs.contender / floor.cpuPerStepMs.contender : null;
}

const divided = (a: number | null | undefined, b: number | null | undefined): number | null =>
  a === null || a === undefined || b === null || b === undefined || !(b > 0) ? null : a / b;

export function judgeGoals(results: Results): GoalSummary {
  const levels = results.runs
    .filter((run) => run.contender === PLAIN)
    .map((plain): LevelGoals => {
      const floor = runOf(results, FLOOR.name, plain);
      const inProcess = runOf(results, IN_PROCESS.name, plain);
      const encrypted = runOf(results, ENCRYPTED, plain);
      const peer = runOf(results, PEER, plain);
      const floorCpu = floor?.cpuPerStepMs.contender;
      return {
        modelDelayMs: plain.modelDelayMs,
        concurrency: plain.concurrency,
        overhead: judged(
          plain.ratios.overheadP50,
          plain.concurrency === 1 ? OVERHEAD_GOAL.single : OVERHEAD_GOAL.concurrent,
        ),
        workerCpu: judged(workerCpuRatio(results, plain), WORKER_CPU_GOAL),
        callsAloneCpu:
          floorCpu === undefined || inProcess === undefined
            ? null
            : divided(floorCpu + inProcess.cpuPerStepMs.contender, floorCpu),
        encryption: judged(divided(encrypted?.overheadPerStepMs.p50, plain.overheadPerStepMs.p50), ENCRYPTION_GOAL),
        peerPlain: judged(divided(plain.overheadPerStepMs.p50, peer?.overheadPerStepMs.p50), 1, true),
        peerEncrypted: judged(divided(encrypted?.overheadPerStepMs.p50, peer?.overheadPerStepMs.p50), 1, true),
      };
    });
  const rssOf = (name: string) => results.contenders.find((contender) => contender.name === name)?.peakRssRatio;
  const peakRss = { plain: judged(rssOf(PLAIN), PEAK_RSS_GOAL), encrypted: judged(rssOf(ENCRYPTED), PEAK_RSS_GOAL) };
  const all = [
    ...levels.flatMap((level) => [
      level.overhead,
      level.workerCpu,
      level.encryption,
      level.peerPlain,
      level.peerEncrypted,
    ]),
    peakRss.plain,
    peakRss.encrypted,
  ].filter((check) => check.met !== null);
  return { levels, peakRss, met: all.filter((check) => check.met).length, checked: all.length };
}

const mark = (check: Judged): string => (check.met === null ? '' : check.met ? ' ✓' : ' ✗');
const cell = (check: Judged): string => `${times(check.value)}${mark(check)}`;

/** The "Goals" section of docs/benchmarks.md: a row per level, then memory and the first token. */
export function goalsSection(results: Results): string[] {
  const summary = judgeGoals(results);
  if (summary.levels.length === 0) return [];
  const rows = summary.levels.map((level) => [
    `${level.modelDelayMs} ms @${level.concurrency}`,
    `${cell(level.overhead)} (≤ ${times(level.overhead.goal)})`,
    cell(level.workerCpu),
    times(level.callsAloneCpu),
    cell(level.encryption),
    `${cell(level.peerPlain)} / ${cell(level.peerEncrypted)}`,
  ]);
  const firstToken = results.firstToken ?? [];
  const firstTokenMet = firstToken.filter((entry) => entry.goalMet).length;
  const met = summary.met + firstTokenMet;
  const checked = summary.checked + firstToken.length;
  const rss = summary.peakRss;
  return [
    '## Goals',
    'durable-agent against the goals it is held to, judged from the tables below (✓ met, ✗ missed; overhead per step at ' +
      "the median). **Floor + calls alone** is the floor's worker CPU per step plus the in-process loop's (its " +
      "openai and MCP clients making the same calls, and nothing else), as a multiple of the floor's: the least a " +
      'worker that makes these calls with these clients could spend. What the worker-CPU goal leaves for everything ' +
      'else durable-agent does per step (its workflow code, larger payloads, redaction, heartbeats, streaming) is the ' +
      `difference between that column and ${times(WORKER_CPU_GOAL)}.`,
    table(
      [
        'model delay @conversations',
        'overhead/step × floor (goal)',
        `worker CPU/step × floor (≤ ${times(WORKER_CPU_GOAL)})`,
        'floor + calls alone',
        `encrypted ÷ plain (≤ ${times(ENCRYPTION_GOAL)})`,
        '÷ the peer, plain / encrypted (< 1.00×)',
      ],
      rows,
    ),
    `Peak RSS × the floor's (≤ ${times(PEAK_RSS_GOAL)}): plain ${cell(rss.plain)}, encrypted ${cell(rss.encrypted)}.` +
      (firstToken.length === 0
        ? ''
        : ` First token (≤ ${number(firstToken[0]!.goalMs, 0)} ms added at the median, client API and \`serve\`): ` +
          firstToken.map((entry) => `@${entry.concurrency} ${entry.goalMet ? 'met ✓' : 'missed ✗'}`).join(', ') +
          '.') +
      ` **${met} of ${checked} checks met in this run.**`,
  ];
}
