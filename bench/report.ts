import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { goalsSection, workerCpuRatio } from './goals.js';
import { number, table, times } from './markdown.js';
import type { ContenderSummary, FirstTokenFigures, Percentiles, Results, RunFigures } from './results.js';

/** Hand-written notes (method, findings) appended to the generated tables; lives next to the sources. */
const NOTES = fileURLToPath(new URL('../../notes.md', import.meta.url));

function labelOf(results: Results, name: string): string {
  return results.contenders.find((contender) => contender.name === name)?.label ?? name;
}

function headline(results: Results, delay: number): string {
  const rows = results.runs
    .filter((run) => run.modelDelayMs === delay && run.concurrency === 1)
    .map((run) => [
      labelOf(results, run.contender),
      number(run.overheadPerStepMs.p50, 2),
      times(run.ratios.overheadP50),
      number(run.overheadPerStepMs.p99, 2),
      times(run.ratios.overheadP99),
      number(run.latencyMs.p50, 0),
      times(run.ratios.latencyP50),
      number(run.addedToInProcessPerStepMs, 1),
    ]);
  return table(
    [
      'Contender',
      'overhead/step p50 (ms)',
      '× floor',
      'p99 (ms)',
      '× floor',
      'turn p50 (ms)',
      '× floor',
      'added to the in-process turn, per step (ms)',
    ],
    rows,
  );
}

function concurrencyTable(results: Results, delay: number): string {
  const runs = results.runs.filter((run) => run.modelDelayMs === delay);
  const rows = runs.map((run: RunFigures) => [
    `${run.contender} @${run.concurrency}`,
    String(run.turns),
    number(run.latencyMs.p50, 0),
    number(run.latencyMs.p99, 0),
    `${number(run.overheadPerStepMs.p50, 2)} (${times(run.ratios.overheadP50)})`,
    `${number(run.overheadPerStepMs.p99, 2)} (${times(run.ratios.overheadP99)})`,
    `${number(run.turnsPerSecond, 2)} (${times(run.ratios.throughput)})`,
    number(run.stepsPerSecond, 0),
    `${number(run.cpuPerStepMs.contender, 2)} (${times(workerCpuRatio(results, run))}) / ${number(run.cpuPerStepMs.server, 2)} / ${number(run.cpuPerStepMs.modelServer, 2)}`,
    number(run.peakRssMiB, 0),
  ]);
  return table(
    [
      'Contender @concurrency',
      'turns',
      'turn p50 (ms)',
      'turn p99 (ms)',
      'overhead/step p50 (ms, × floor)',
      'overhead/step p99 (ms, × floor)',
      'turns/s (× floor)',
      'steps/s',
      'CPU/step ms: worker (× floor) / server / model',
      'RSS MiB',
    ],
    rows,
  );
}

const spread = (value: Percentiles): string => `${number(value.p50, 0)} / ${number(value.p95, 0)}`;

function firstTokenTable(figures: FirstTokenFigures[]): string {
  const rows = figures.map((entry) => [
    `${entry.contender} @${entry.concurrency}`,
    String(entry.turns),
    spread(entry.modelMs),
    spread(entry.toModelMs),
    spread(entry.stackMs),
    spread(entry.addedStackMs),
    spread(entry.serveMs),
    spread(entry.addedServeMs),
    `${entry.goalMet ? 'met' : 'missed'} (≤ ${entry.goalMs} ms added, p50)`,
  ]);
  return table(
    [
      'Contender @conversations',
      'turns',
      "model's own (ms, p50 / p95)",
      'message → model request',
      'client API: first token',
      'added',
      '`serve` (SSE): first token',
      'added',
      'goal',
    ],
    rows,
  );
}

function firstTokenSection(results: Results): string[] {
  const figures = results.firstToken ?? [];
  const first = figures[0];
  if (first === undefined) return [];
  return [
    '## Time to first token',
    'Each conversation is open and watched by one viewer: every other one by a client subscribed through the client ' +
      "API (`subscribe`), the rest by an SSE client of `durable-agent serve` (its own process). Once the viewer's " +
      "poll waits in the workflow, the user's message is sent with `DurableAgentClient.send` (after a random pause of " +
      `up to half a second, so that conversations do not send in step), and the scripted model streams its answer ${first.modelDelayMs} ms after the request, a word every ` +
      `${first.chunkDelayMs} ms. Times are from sending the message to the first \`text_delta\`; the model's own is ` +
      "from its request's arrival to its first text leaving, stamped by the model server. **Added** = a viewer's time " +
      "minus the model's own, turn by turn: what durable-agent adds to the model's first token (the goal: at most " +
      `${first.goalMs} ms at the median).`,
    firstTokenTable(figures),
  ];
}

function historyTable(results: Results): string {
  const rows = results.history.map((entry) => [
    labelOf(results, entry.contender),
    String(entry.oneTurn.activities),
    `${number(entry.oneTurn.eventsPerStep, 2)} (${times(entry.ratios.oneTurnEventsPerStep)})`,
    `${number(entry.oneTurn.bytesPerStep, 0)} (${times(entry.ratios.oneTurnBytesPerStep)})`,
    entry.long ? `${number(entry.long.events, 0)} / ${number(entry.long.bytes / 1024, 1)} KiB` : '—',
    entry.long ? `${number(entry.long.eventsPerStep, 2)} (${times(entry.ratios.longEventsPerStep)})` : '—',
    entry.long ? `${number(entry.long.bytesPerStep, 0)} (${times(entry.ratios.longBytesPerStep)})` : '—',
    number(Math.max(entry.oneTurn.largestEventBytes, entry.long?.largestEventBytes ?? 0), 0),
  ]);
  return table(
    [
      'Contender',
      'activities/turn',
      'events/step, 1 turn (× floor)',
      'bytes/step, 1 turn (× floor)',
      `${results.workload.longConversationSteps}-step conversation: events / size`,
      'events/step (× floor)',
      'bytes/step (× floor)',
      'largest event (bytes)',
    ],
    rows,
  );
}

function replayTable(results: Results): string {
  const rows = results.replay.map((entry) => [
    labelOf(results, entry.contender),
    String(entry.turns),
    number(entry.events, 0),
    number(entry.bundleMs, 0),
    `${number(entry.replayMs, 0)} (${times(entry.ratios.replayMs)})`,
    `${number(entry.coldMs, 0)} (${times(entry.ratios.coldMs)})`,
    number(entry.rssMiB, 0),
  ]);
  return table(
    ['Contender', 'turns', 'events', 'bundle (ms)', 'replay (ms, × floor)', 'bundle + replay (ms, × floor)', 'RSS MiB'],
    rows,
  );
}

function contenderTable(contenders: ContenderSummary[]): string {
  const rows = contenders.map((contender) => [
    contender.label,
    contender.available ? 'ran' : `did not run: ${contender.reason ?? 'unknown'}`,
    number(contender.startupMs, 0),
    number(contender.activitiesPerTurn, 0),
    contender.peakRssMiB === undefined ? '—' : `${number(contender.peakRssMiB, 0)} (${times(contender.peakRssRatio)})`,
  ]);
  return table(['Contender', 'status', 'start-up (ms)', 'activities/turn', 'peak RSS MiB (× floor)'], rows);
}

function notes(): string {
  try {
    return readFileSync(NOTES, 'utf8').trim();
  } catch {
    return '';
  }
}

export function renderMarkdown(results: Results): string {
  const { machine, load, workload } = results;
  const sections = [
    '# Benchmarks',
    `Generated by \`${results.command}\` on ${results.generatedAt.slice(0, 16).replace('T', ' ')} UTC in ${results.durationSeconds} s, at commit ${results.commit}` +
      `${results.quick ? ' (quick run: a smoke test, not numbers to publish)' : ''}. Do not edit by hand: ` +
      'the tables come from `docs/benchmarks.json`, the notes at the end from `bench/notes.md`.',
    `**Machine:** ${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
      `${machine.platform}, kernel ${machine.kernel}. **Load average** (1/5/15 min): ${load.start.join(' / ')} at the ` +
      `start, ${load.end.join(' / ')} at the end. Other engineers' test runs share this machine, so every figure is ` +
      'noisy; compare contenders within one run (they alternate batch by batch), not across runs.',
    `**Workload:** each turn is a chain of ${workload.toolCallsPerTurn} tool calls: ${workload.modelCallsPerTurn} model ` +
      `calls and ${workload.toolCallsPerTurn} calls of the ${workload.tool} over stdio, ${workload.stepsPerTurn} steps. ` +
      `The scripted model answers at once or after ${workload.modelDelaysMs.filter((delay) => delay > 0).join(', ') || '—'} ms. ` +
      '**Overhead per step** = (turn latency − time inside model requests and tool calls) / steps. The floor calls ' +
      'no model and no tool: its activities do nothing, except that with a model delay every other one waits that ' +
      'long, which counts as its model time. Ratios (×) divide by the raw Temporal floor in the same conditions.',
    `**Temporal:** one dev server (\`temporal server start-dev\`, SQLite in memory) for every contender, started with ` +
      `${results.serverArgs.length > 0 ? `\`${results.serverArgs.join(' ')}\`` : 'its default settings'} (see bench/notes.md).`,
    '## Contenders',
    contenderTable(results.contenders),
    ...goalsSection(results),
    ...workload.modelDelaysMs.flatMap((delay) => [
      `## Per-step overhead, one conversation at a time, model delay ${delay} ms`,
      headline(results, delay),
    ]),
    '![Per-step overhead against concurrency](benchmarks-overhead.svg)',
    ...workload.modelDelaysMs.flatMap((delay) => [
      `## Concurrency, model delay ${delay} ms`,
      concurrencyTable(results, delay),
    ]),
    ...firstTokenSection(results),
    ...(results.history.length > 0 ? ['## History', historyTable(results)] : []),
    ...(results.replay.length > 0
      ? [
          `## Replay of a ~${workload.replayTargetEvents}-event history on a cold worker`,
          'A fresh process fetches the history (not timed), bundles the workflow code from scratch, then runs ' +
            '`Worker.runReplayHistory`.',
          replayTable(results),
        ]
      : []),
    ...(results.problems.length > 0
      ? ['## Problems in this run', results.problems.map((problem) => `- ${problem.split('\n')[0]}`).join('\n')]
      : []),
    notes(),
  ];
  return `${sections.filter((section) => section !== '').join('\n\n')}\n`;
}
