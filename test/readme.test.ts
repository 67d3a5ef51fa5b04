import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Activities } from '../src/worker/activities/index.js';
import { buildProgram } from '../src/cli/program.js';
import { loadMcpConfig } from '../src/worker/mcp/config.js';
import { ExitCode } from '../src/shared/exit-codes.js';
import { loadScriptFile } from '../src/testing/scripted-model/index.js';
import { CONVERSATION_PHASES } from '../src/workflows/definitions.js';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

describe('the README', () => {
  it('shows the example test from examples/agent.test.ts word for word (that file runs in npm test)', () => {
    expect(read('README.md')).toContain(read('examples/agent.test.ts'));
  });

  it('shows the backend example from examples/backend.ts word for word (typechecked with the project)', () => {
    expect(read('README.md')).toContain(read('examples/backend.ts'));
  });

  it('docs/tools.md shows examples/order-tools.ts and examples/structured-answer.ts word for word (typechecked)', () => {
    expect(read('docs/tools.md')).toContain(read('examples/order-tools.ts'));
    expect(read('docs/tools.md')).toContain(read('examples/structured-answer.ts'));
  });

  it('gives the two commands, run and test, before anything else', () => {
    const readme = read('README.md');
    const firstSection = readme.slice(0, readme.indexOf('\n## ', readme.indexOf('## The two commands') + 1));
    expect(firstSection).toContain('npm install && npm start');
    expect(firstSection).toContain('npm install && npm test');
  });
});

describe('the examples the README runs', () => {
  it('examples/two-tools.json is a valid script that calls two tools, then answers', async () => {
    const script = await loadScriptFile(fileURLToPath(new URL('../examples/two-tools.json', import.meta.url)));
    expect(script.slice(0, 2).map((step) => ('toolCalls' in step ? step.toolCalls?.[0]?.name : undefined))).toEqual([
      'everything__echo',
      'everything__get-sum',
    ]);
  });

  it('examples/mcp.json configures the everything server over stdio', () => {
    const config = loadMcpConfig(fileURLToPath(new URL('../examples/mcp.json', import.meta.url)));
    expect(config.servers.map((server) => [server.name, server.transport])).toEqual([['everything', 'stdio']]);
  });
});

/** README.md and every page of docs/, by name. */
const pages = () => [
  'README.md',
  ...readdirSync(new URL('../docs/', import.meta.url))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];
/** The backticked names in `text`: "`a`, `b` and `c`" → a, b, c. */
const quotedNames = (text: string) => [...text.matchAll(/`([\w-]+)/g)].map(([, name]) => name!);

/** The worker's activity types; the compiler checks that they are exactly those `createActivities` returns. */
const ACTIVITY_TYPES = [
  'callModel',
  'callTool',
  'findEarlierRun',
  'readDeploymentRouting',
  'deliverScheduledMessage',
  'summarizeTranscript',
  'pollToolTask',
  'toolTaskResult',
  'answerToolTask',
  'cancelToolTask',
  'recordSpend',
] as const;

describe('what the README and docs/ say about the code', () => {
  it("every list of the DurableAgentStatus search attribute's values is the code's list of phases", () => {
    const lists = pages().flatMap((page) =>
      [
        ...read(page)
          .replace(/\s+/g, ' ')
          .matchAll(/`DurableAgentStatus` \((?:Keyword: )?(`[^)]*)\)/g),
      ].map(([, list]) => ({ page, values: quotedNames(list!) })),
    );
    expect(lists.map(({ page }) => page)).toEqual(
      expect.arrayContaining(['README.md', 'docs/security.md', 'docs/cli.md', 'docs/protocol.md']),
    );
    for (const { page, values } of lists) expect(values, page).toEqual([...CONVERSATION_PHASES]);
  });

  it('the activity types the docs name are activities the worker registers', () => {
    expectTypeOf<(typeof ACTIVITY_TYPES)[number]>().toEqualTypeOf<keyof Activities>();
    const lists = pages().flatMap((page) =>
      [
        ...read(page)
          .replace(/\s+/g, ' ')
          .matchAll(/activity types \(([^)]*)\)/g),
      ].map(([, list]) => ({
        page,
        names: quotedNames(list!),
      })),
    );
    expect(lists.length).toBeGreaterThan(0);
    for (const { page, names } of lists) {
      expect(
        names.filter((name) => !(ACTIVITY_TYPES as readonly string[]).includes(name)),
        page,
      ).toEqual([]);
    }
  });

  it('a comment that points at names in another source file names ones that file has', () => {
    const sources = readdirSync(new URL('../src/', import.meta.url), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => `src/${file}`);
    const pointers = sources.flatMap((file) =>
      [
        ...read(file)
          .replace(/\n\s*(\*|\/\/)\s*/g, ' ')
          .matchAll(/((?:`\w+`(?:,? and |, | or )?)+) in (src\/[\w/.-]+\.ts)/g),
      ].map(([, names, target]) => ({ file, names: quotedNames(names!), target: target! })),
    );
    expect(pointers.length).toBeGreaterThan(0);
    for (const { file, names, target } of pointers) {
      const text = read(target);
      const missing = names.filter((name) => !new RegExp(`\\b${name}\\b`).test(text));
      expect(missing, `${file} points at ${target}`).toEqual([]);
    }
  });

  it('the exit codes are documented where src/shared/exit-codes.ts says, one row per code', () => {
    const where = /documented in (\S+?),? "([^"]+)"/.exec(read('src/shared/exit-codes.ts'));
    expect(where, 'src/shared/exit-codes.ts names the page and section of its codes').not.toBeNull();
    const [, page, section] = where!;
    const text = read(page!).split(`### ${section}\n`)[1]?.split(/^#/m)[0] ?? '';
    for (const [name, code] of Object.entries(ExitCode)) {
      expect(text, `${page}, "${section}": ${name}`).toMatch(new RegExp(`^\\| ${code} +\\| \`${name}\` `, 'm'));
    }
  });

  it('every command of the CLI has a row in the command table of docs/cli.md', async () => {
    const commands = (await buildProgram(['node', 'durable-agent'])).commands.map((command) => command.name());
    expect(commands).toEqual(expect.arrayContaining(['dev', 'provision', 'ask', 'serve']));
    const section =
      read('docs/cli.md')
        .split(/^## Commands$/m)[1]
        ?.split(/^## /m)[0] ?? '';
    const documented = new Set(
      section
        .split('\n')
        .filter((line) => line.startsWith('| `'))
        .flatMap((line) => quotedNames(line.split('|')[1]!)),
    );
    expect(commands.filter((command) => !documented.has(command))).toEqual([]);
  });
});
