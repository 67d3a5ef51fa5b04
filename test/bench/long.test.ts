import { describe, expect, it } from 'vitest';
import { LONG_SECTION_BEGIN, LONG_SECTION_END, longMarkdown, spliceLongSection } from '../../bench/long/report.js';
import type { LongRunFigures } from '../../bench/long/run.js';
import { LONG_RUNS } from '../../bench/long/runs.js';
import { SECTION_BEGIN, SECTION_END, spliceSection } from '../../bench/production/report.js';

const figures: LongRunFigures = {
  name: 'read-files',
  label: '50 turns of 20 read_text_file calls',
  build: 'current',
  turns: 50,
  steps: 1000,
  historyBytes: 56_427_000,
  historyEvents: 5_300,
  runs: 51,
  bytesPerStep: 56_427,
  resultBytes: 51_200,
  bytesPerStepToResult: 1.102,
  largestRun: { bytes: 1_134_185, events: 106, bytesShareOfLimit: 0.0216, eventsShareOfLimit: 0.0021 },
  turnLatencyMs: { start: 1121, end: 391 },
  workerCpuMsPerStep: 11.27,
  compactions: 0,
  carriedBytes: 1_687_940,
  wallSeconds: 28.4,
};

describe('bench --long', () => {
  it('long: every run has a kebab-case name of its own (`--long --only <name>` selects it)', () => {
    const names = LONG_RUNS.map((run) => run.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it('long: the section shows per step, the largest run against the limits, latency, CPU and compactions', () => {
    const section = longMarkdown({ date: '2026-11-29', figures: [figures] });
    expect(section.startsWith(LONG_SECTION_BEGIN)).toBe(true);
    expect(section.endsWith(LONG_SECTION_END)).toBe(true);
    expect(section).toContain(
      '| read-files | current | 1,000 (50) | 56,427 B | 1.102x | 51 | 1,134,185 B (2.2%) | 106 (0.2%) | 1,687,940 B | ' +
        '1,121 → 391 ms | 11.27 ms | 0 |',
    );
  });

  it('long: the section goes before the notes once, is replaced in place, and leaves the production section alone', () => {
    const section = (text: string) => `${LONG_SECTION_BEGIN}\n${text}\n${LONG_SECTION_END}`;
    const production = `${SECTION_BEGIN}\nproduction\n${SECTION_END}`;
    const page = spliceSection('# Benchmarks\n\n## History\n\n## Notes\n\nnotes\n', production);
    const fresh = spliceLongSection(page, section('one'));
    expect(fresh.indexOf(LONG_SECTION_BEGIN)).toBeLessThan(fresh.indexOf('## Notes'));
    expect(fresh).toContain(production);
    expect(spliceLongSection(fresh, section('two'))).toBe(fresh.replace('one', 'two'));
  });
});
