#!/usr/bin/env node
// The fault runs (test/reliability/*.reliability.ts: worker crashes, server restart, the production stack's processes
// killed (scripts/production-stack.mjs), MCP faults, a new Worker Deployment
// Version made current, the Web UI and the chat page of `serve` in headless Chromium, the in-place upgrade from each
// release in releases.json), then the results table in docs/reliability.md, rendered from the rows the tests measured
// (test-results/reliability/<file>.json), and the
// browser screenshots copied to docs/screenshots.
//
//   npm run build && node scripts/reliability.mjs                     # run, then render (a few minutes)
//   node scripts/reliability.mjs worker-crash recovery                # only these files; the table keeps the others
//   node scripts/reliability.mjs --render-only                       # render from the last run's results
//
// The table goes between the `<!-- results:start -->` and `<!-- results:end -->` markers of docs/reliability.md (and to
// test-results/reliability/table.md, which CI keeps). Exits non-zero when a test failed; the table then says FAILED.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const resultsDir = path.join(root, 'test-results/reliability');
const vitestReport = path.join(resultsDir, 'vitest.json');
const runFile = path.join(resultsDir, 'run.json');
const docsFile = path.join(root, 'docs/reliability.md');
const START = '<!-- results:start -->';
const END = '<!-- results:end -->';
/**
 * Table order: worker, server, MCP, the Web UI, the chat page, then the deploys (the in-place upgrade from each release,
 * a new Worker Deployment Version made current), whatever order the files finished in.
 */
const FILES = [
  'worker-crash',
  'recovery',
  'approval-crash',
  'server-restart',
  'production-stack',
  'mcp-faults',
  'web-ui',
  'chat-page',
  'upgrade',
  'versioning',
];
const BROWSER_FILES = ['web-ui', 'chat-page'];
/** The browser tests save their screenshots here (CI keeps test-results/); a run copies them to docs/screenshots. */
const screenshotsDir = path.join(root, 'test-results/screenshots');
const docsScreenshotsDir = path.join(root, 'docs/screenshots');

/** The fault files named on the command line (all when none is), each checked against {@link FILES}. */
function chosenFiles(argv) {
  const names = argv.filter((argument) => !argument.startsWith('--'));
  const unknown = names.filter((name) => !FILES.includes(name));
  if (unknown.length > 0) {
    throw new Error(`no fault file named ${unknown.join(', ')}: name some of ${FILES.join(', ')} (or none for all)`);
  }
  return names.length > 0 ? names : FILES;
}

function runTests(files) {
  mkdirSync(resultsDir, { recursive: true });
  for (const file of files) {
    const rows = path.join(resultsDir, `${file}.json`);
    if (existsSync(rows)) writeFileSync(rows, JSON.stringify({ file, rows: [] }));
  }
  const started = Date.now();
  const run = spawnSync(
    'npx',
    [
      'vitest',
      'run',
      '--config',
      'scripts/reliability.config.ts',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${path.relative(root, vitestReport)}`,
      ...(files.length < FILES.length ? files.map((file) => `test/reliability/${file}.reliability.ts`) : []),
    ],
    { cwd: root, stdio: 'inherit' },
  );
  const seconds = (Date.now() - started) / 1000;
  writeFileSync(runFile, JSON.stringify({ seconds, status: run.status, files }));
  return { status: run.status ?? 1, seconds };
}

const cell = (text) =>
  String(text ?? '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|');

function fileDurations() {
  if (!existsSync(vitestReport)) return new Map();
  const report = JSON.parse(readFileSync(vitestReport, 'utf8'));
  return new Map(
    report.testResults.map((result) => [
      path.basename(result.name).replace(/\.reliability\.ts$/, ''),
      {
        seconds: (result.endTime - result.startTime) / 1000,
        status: result.status,
        // A test can fail after its rows were written (vitest's timeout): the rows then say passed, the file does not.
        failedTests: result.assertionResults.filter((test) => test.status === 'failed').map((test) => test.title),
      },
    ]),
  );
}

/** The sections of the table now in the docs, by fault file: kept for the files that have no results here. */
function sectionsInDocs(docs) {
  const table = docs.slice(docs.indexOf(START) + START.length, docs.indexOf(END));
  const sections = new Map();
  for (const section of table.split(/^(?=### )/m).filter((part) => part.startsWith('### '))) {
    const file = /`test\/reliability\/([\w-]+)\.reliability\.ts`/.exec(section)?.[1];
    if (!file) continue;
    // The table's closing lines (the total, the failures) follow the last section: they are the earlier run's.
    const body = section.split(/^(?=All fault runs together|The files of this run together|\*\*\d+ fault run)/m)[0];
    sections.set(file, `${sections.get(file) ?? ''}${body.trimEnd()}\n\n`);
  }
  return sections;
}

/** The cell of the "SIGKILL → next attempt" column, which only groups that measure it have. */
const resumedCell = (row) => (row.resumedSeconds === undefined ? '' : `${row.resumedSeconds.toFixed(1)} s`);

async function render(totalSeconds) {
  const files = readdirSync(resultsDir)
    .filter((file) => file.endsWith('.json') && !['vitest.json', 'run.json'].includes(file))
    .map((file) => JSON.parse(readFileSync(path.join(resultsDir, file), 'utf8')))
    .filter((result) => result.rows.length > 0)
    .sort((a, b) => FILES.indexOf(a.file) - FILES.indexOf(b.file));
  if (files.length === 0) throw new Error(`no results in ${resultsDir}: run the fault tests first`);
  const docs = readFileSync(docsFile, 'utf8');
  const kept = sectionsInDocs(docs);
  for (const result of files) kept.delete(result.file);
  const durations = fileDurations();
  const lines = [
    `Generated by \`node scripts/reliability.mjs\` from the run of ${files
      .map((result) => result.recordedAt?.slice(0, 10))
      .filter(Boolean)
      .sort()
      .at(-1)} (Node ${process.version}, ${os.cpus().length} cores, ${os.platform()}). Do not edit by hand.`,
    '',
  ];
  if (kept.size > 0) {
    lines.push(
      `The sections of ${[...kept.keys()].map((file) => `\`${file}\``).join(', ')} are from an earlier run ` +
        '(`node scripts/reliability.mjs <file> ...` runs only the files it names).',
      '',
    );
  }
  const failed = files.flatMap((result) => result.rows).filter((row) => !row.passed).length;
  const sections = new Map([...kept].map(([file, text]) => [file, [text]]));
  for (const result of files) {
    const section = [];
    sections.set(result.file, section);
    const groups = [...new Set(result.rows.map((row) => row.group))];
    const duration = durations.get(result.file);
    for (const group of groups) {
      section.push(`### ${group}`, '');
      section.push(
        `\`test/reliability/${result.file}.reliability.ts\`` +
          (duration
            ? `: ${duration.seconds.toFixed(0)} s in its tests (vitest's measure, set-up hooks not included).`
            : '.') +
          (duration?.failedTests.length > 0
            ? ` **vitest failed ${duration.failedTests.map((title) => `"${title}"`).join(', ')} in this run.**`
            : ''),
        '',
      );
      const groupRows = result.rows.filter((entry) => entry.group === group);
      const resumed = groupRows.some((row) => row.resumedSeconds !== undefined);
      section.push(
        `| Fault | What happened | Counts |${resumed ? ' SIGKILL → next attempt |' : ''} Fault → turn done | Result |`,
        `| --- | --- | --- |${resumed ? ' --- |' : ''} --- | --- |`,
      );
      for (const row of groupRows) {
        const recovery = row.recoverySeconds === undefined ? '' : `${row.recoverySeconds.toFixed(1)} s`;
        section.push(
          `| ${cell(row.fault)} | ${cell(row.outcome)} | ${cell(row.counts)} |${resumed ? ` ${resumedCell(row)} |` : ''} ${recovery} | ${row.passed ? 'passed' : '**FAILED**'} |`,
        );
      }
      section.push('');
    }
  }
  for (const file of FILES) lines.push(...(sections.get(file) ?? []));
  totalSeconds ??= existsSync(runFile) ? JSON.parse(readFileSync(runFile, 'utf8')).seconds : undefined;
  if (totalSeconds !== undefined) {
    lines.push(
      `${kept.size > 0 ? 'The files of this run' : 'All fault runs'} together: ${totalSeconds.toFixed(0)} s.`,
      '',
    );
  }
  if (failed > 0) lines.push(`**${failed} fault run(s) failed in this run.**`, '');
  const table = lines.join('\n');

  const start = docs.indexOf(START);
  const end = docs.indexOf(END);
  if (start === -1 || end < start) throw new Error(`${docsFile} has no ${START} ... ${END} markers`);
  const options = { ...(await prettier.resolveConfig(docsFile)), filepath: docsFile };
  const updated = await prettier.format(
    `${docs.slice(0, start + START.length)}\n\n${table}\n${docs.slice(end)}`,
    options,
  );
  writeFileSync(docsFile, updated);
  writeFileSync(path.join(resultsDir, 'table.md'), await prettier.format(table, { ...options, filepath: 'table.md' }));
  console.log(`reliability: wrote the results table (${files.length} files) to ${path.relative(root, docsFile)}`);
}

function copyScreenshots() {
  if (!existsSync(screenshotsDir)) return;
  mkdirSync(docsScreenshotsDir, { recursive: true });
  for (const file of readdirSync(screenshotsDir).filter((name) => name.endsWith('.png'))) {
    copyFileSync(path.join(screenshotsDir, file), path.join(docsScreenshotsDir, file));
  }
}

async function main(argv) {
  const files = chosenFiles(argv);
  if (argv.includes('--render-only')) return void (await render());
  const { status, seconds } = runTests(files);
  await render(seconds);
  // Only the browser tests take screenshots: a run without them leaves docs/screenshots as it is.
  if (files.some((file) => BROWSER_FILES.includes(file))) copyScreenshots();
  process.exitCode = status;
}

main(process.argv.slice(2)).catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
