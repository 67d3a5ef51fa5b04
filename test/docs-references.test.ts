import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The docs name files and code; both move. Every path and every code name in backticks in README.md and docs/,
 * and every repo path or relative link in their prose, must exist: a path from the repo's root or the doc's folder (a
 * bare file name: one the repo has or the code names), a name in our code or in the declarations of the dependency it
 * comes from. A stale name is fixed in the doc, never added below.
 */
const root = path.resolve(import.meta.dirname, '..');
/** The files under dir (relative to the root) whose name matches, not looking into a nested node_modules. */
const filesUnder = (dir: string, name: RegExp) =>
  readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && name.test(entry.name))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.slice(dir.length).includes('node_modules'));
const docs = ['README.md', ...filesUnder('docs', /\.md$/)];

const ourDirs = ['src', 'test', 'bench', 'scripts', 'examples', '.ci'];
const ours = [
  ...ourDirs
    .flatMap((dir) => filesUnder(dir, /\.(ts|mts|js|mjs|cjs|py|sh|json|yml|html|css)$|^run$/))
    .filter((file) => file !== path.relative(root, import.meta.filename)), // this file names what is missing
  ...['package.json', 'docker-compose.yml', 'Dockerfile'],
].map((file) => readFileSync(path.join(root, file), 'utf8'));
const theirs = [
  ...['@temporalio', '@types/node', 'openai', '@modelcontextprotocol/sdk', '@opentelemetry'].flatMap((dir) =>
    filesUnder(`node_modules/${dir}`, /\.d\.ts$/),
  ),
  // sdk-core, the Rust core of Temporal's SDKs, ships in @temporalio/core-bridge: docs/upstream/ quotes it.
  ...filesUnder('node_modules/@temporalio/core-bridge/sdk-core', /\.rs$/),
].map((file) => readFileSync(path.join(root, file), 'utf8'));
const words = new Set<string>();
for (const text of [...ours, ...theirs]) for (const word of text.match(/[\w$]+/g) ?? []) words.add(word);
const fileNames = new Set([
  ...[...ourDirs, 'docs', 'schemas'].flatMap((dir) => filesUnder(dir, /./)).map((file) => path.basename(file)),
  ...ours.flatMap((text) => text.match(/[\w.-]+\.(?:ts|md|mjs|json|yml)\b/g) ?? []), // files the code reads or writes
]);

/** Names of other projects that no installed declaration holds, each with where it comes from. */
const FOREIGN = new Map([
  ['OTEL_METRICS_EXPORTER', 'OpenTelemetry: the SDK environment variable (read as `OTEL_${signal}_EXPORTER`)'],
  ['HTTPS_PROXY', 'the proxy variable of curl, pip and Go, which Node ignores (docs/servers.md)'],
]);

const PATH =
  /^(?:\.{0,2}\/)?(?:src|test|docs|scripts|bench|examples|schemas|\.ci)\/[\w./@<>-]*$|^[\w.-]+\.(?:ts|md|mjs|json|yml)$/;
const PROSE_PATH =
  /(?<![\w./`-])(?:src|test|docs|scripts|bench|examples)\/[\w./-]*[\w/]|\]\((?!https?:|#|mailto:)([^)#\s]+)/g;
const isCodeName = (word: string) =>
  /^[A-Za-z_$][\w$]*$/.test(word) &&
  (/[a-z][A-Z]|^[A-Z][a-z]+[A-Z]/.test(word) || /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/.test(word));

/** `Foo.bar(x)` names `bar`. */
const lastName = (span: string) => /[^.]*$/.exec(span.replace(/\(.*\)$/, ''))![0];

function references(doc: string): { paths: string[]; names: string[] } {
  const text = readFileSync(path.join(root, doc), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!.trim());
  const prose = [...text.replace(/`[^`]+`/g, '').matchAll(PROSE_PATH)].map((match) => match[1] ?? match[0]);
  const paths = [...spans.filter((span) => PATH.test(span)), ...prose]
    .map((p) => p.replace(/<[^>]*>.*$/, '')) // test/fixtures/releases/<version>/ is checked up to the placeholder
    .filter((p) => !p.includes('*') && !/(^|\/)dist\//.test(p)); // dist/ is built, not kept
  const names = spans.map(lastName).filter(isCodeName);
  return { paths: [...new Set(paths)], names: [...new Set(names)] };
}

describe.each(docs)('%s', (doc) => {
  const { paths, names } = references(doc);

  it('names only paths that exist', () => {
    const exists = (p: string) =>
      existsSync(path.join(root, p)) || existsSync(path.join(root, path.dirname(doc), p)) || fileNames.has(p);
    expect(paths.filter((p) => !exists(p))).toEqual([]);
  });

  it('names only code that exists', () => {
    expect(names.filter((name) => !words.has(name) && !FOREIGN.has(name))).toEqual([]);
  });
});

it('allows only foreign names that a doc still uses and no declaration holds', () => {
  const used = new Set(docs.flatMap((doc) => references(doc).names));
  expect([...FOREIGN.keys()].filter((name) => !used.has(name) || words.has(name))).toEqual([]);
});
