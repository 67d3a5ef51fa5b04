import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { drawOverheadChart } from './chart.js';
import { sumSteps } from './figures.js';
import { log } from './log.js';
import type { Machine } from './machine.js';
import { repoRoot } from './options.js';
import type { Plan } from './plan.js';
import { withLongSection } from './long/report.js';
import { withProductionSection } from './production/report.js';
import { renderMarkdown } from './report.js';
import type {
  ContenderSummary,
  FirstTokenFigures,
  HistoryFigures,
  ReplayFigures,
  Results,
  RunFigures,
} from './results.js';
import { round } from './stats.js';
import { CHAIN_LENGTH, stepsOf } from './workload.js';
import { withTenantsSection } from './tenants/run.js';

export interface RunRecord {
  quick: boolean;
  serverArgs: string[];
  plan: Plan;
  machine: Machine;
  load: Results['load'];
  durationMs: number;
  contenders: ContenderSummary[];
  runs: RunFigures[];
  history: HistoryFigures[];
  replay: ReplayFigures[];
  firstToken: FirstTokenFigures[];
  problems: string[];
}

/** docs/benchmarks.json's content: the figures with what was run, where, on which commit. */
export function assembleResults(record: RunRecord): Results {
  const { plan } = record;
  return {
    generatedAt: new Date().toISOString(),
    command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
    quick: record.quick,
    commit: sourceCommit(),
    serverArgs: record.serverArgs,
    machine: record.machine,
    load: record.load,
    durationSeconds: round(record.durationMs / 1000, 0),
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
    contenders: record.contenders,
    runs: record.runs,
    history: record.history,
    replay: record.replay,
    firstToken: record.firstToken,
    problems: record.problems,
  };
}

/** benchmarks.{json,md} and the chart into `outDir`; a quick run prints the tables and draws no chart. */
export async function writeOutputs(results: Results, outDir: string): Promise<void> {
  await mkdir(outDir, { recursive: true });
  // The production stack's section (`--stack production`, its own run) stays, from its own JSON.
  const withProduction = await withProductionSection(renderMarkdown(results), outDir);
  // So does the long conversations' (`--long`).
  const withLong = await withLongSection(withProduction, outDir);
  // And the noisy neighbour's (`--tenants`, its own run too).
  const withTenants = await withTenantsSection(withLong, outDir);
  const markdown = await formatMarkdown(withTenants, `${outDir}/benchmarks.md`);
  await writeFile(`${outDir}/benchmarks.json`, `${JSON.stringify(results, null, 2)}\n`);
  if (results.quick) {
    process.stdout.write(markdown);
    return;
  }
  await writeFile(`${outDir}/benchmarks.md`, markdown);
  // A run of the first token alone (`--first-token`) has no overhead to draw.
  if (results.runs.length === 0) return log(`wrote ${outDir}/benchmarks.{json,md}`);
  await writeFile(`${outDir}/benchmarks-overhead.svg`, await drawOverheadChart(results));
  log(`wrote ${outDir}/benchmarks.{json,md} and benchmarks-overhead.svg`);
}

/** The table as the project's Prettier would write it, so `prettier --check` passes on the generated file. */
export async function formatMarkdown(markdown: string, file: string): Promise<string> {
  const prettier = await import('prettier');
  const options = (await prettier.resolveConfig(file)) ?? {};
  return prettier.format(markdown, { ...options, parser: 'markdown' });
}

export function sourceCommit(): string {
  if (process.env.BENCH_SOURCE_COMMIT) return process.env.BENCH_SOURCE_COMMIT;
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src', 'bench'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    return dirty.trim() === '' ? commit : `${commit} (with uncommitted changes)`;
  } catch {
    return 'unknown';
  }
}
