import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureOwnDependencies } from './own-dependencies.js';
import type { Results } from './results.js';

/**
 * The chart: per-step overhead (p50 and p99) against concurrency, one line per contender, one panel per model delay.
 * Drawn by Vega-Lite compiled to Vega and rendered to SVG in Node (no browser, no canvas). Vega lives in bench/chart's
 * own node_modules, so the project does not depend on it.
 */

const chartDirectory = fileURLToPath(new URL('../../chart', import.meta.url));

/** The two calls of Vega and Vega-Lite this file makes. */
interface VegaLite {
  compile(spec: object): { spec: object };
}
interface Vega {
  parse(spec: object): unknown;
  View: new (runtime: unknown, options: { renderer: 'none' }) => { toSVG(): Promise<string> };
}

async function load(): Promise<{ vega: Vega; vegaLite: VegaLite }> {
  const problem = await ensureOwnDependencies(chartDirectory, 'vega/package.json');
  if (problem !== undefined) throw new Error(`Cannot draw the chart: ${problem}`);
  const require = createRequire(`${chartDirectory}/package.json`);
  const vega = (await import(pathToFileURL(require.resolve('vega')).href)) as Vega;
  const vegaLite = (await import(pathToFileURL(require.resolve('vega-lite')).href)) as VegaLite;
  return { vega, vegaLite };
}

export function overheadChartSpec(results: Results): object {
  const values = results.runs.flatMap((run) =>
    (['p50', 'p99'] as const).map((percentile) => ({
      contender: run.contender,
      delay: `model delay ${run.modelDelayMs} ms`,
      concurrency: run.concurrency,
      percentile,
      // A log scale cannot show 0; the in-process loop's overhead is a few microseconds.
      overhead: Math.max(run.overheadPerStepMs[percentile], 0.001),
    })),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: {
      text: 'Per-step orchestration overhead against concurrency',
      subtitle: `solid p50, dashed p99; ${results.machine.cores} cores, Node ${results.machine.node}, ${results.generatedAt.slice(0, 10)}; lower is better`,
    },
    data: { values },
    width: 320,
    height: 260,
    mark: { type: 'line', point: true },
    encoding: {
      column: { field: 'delay', type: 'nominal', title: null },
      x: {
        field: 'concurrency',
        type: 'quantitative',
        scale: { type: 'log' },
        axis: { values: results.workload.concurrency },
        title: 'concurrent conversations',
      },
      y: { field: 'overhead', type: 'quantitative', scale: { type: 'log' }, title: 'overhead per step (ms, log)' },
      color: { field: 'contender', type: 'nominal', title: null, legend: { orient: 'bottom', labelLimit: 0 } },
      strokeDash: {
        field: 'percentile',
        type: 'nominal',
        title: null,
        // Said in the subtitle: Vega draws no visible symbol for a dash-only legend.
        legend: null,
      },
    },
    config: { font: 'sans-serif' },
  };
}

export async function drawOverheadChart(results: Results): Promise<string> {
  const { vega, vegaLite } = await load();
  const view = new vega.View(vega.parse(vegaLite.compile(overheadChartSpec(results)).spec), { renderer: 'none' });
  return `${await view.toSVG()}\n`;
}
