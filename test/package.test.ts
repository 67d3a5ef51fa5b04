import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Vitest's loader forgives what Node's does not (named imports from CommonJS, for one): load the build with Node. */
function exportsUnderNode(specifier: string): string[] {
  const output = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m)));`,
    ],
    { cwd: new URL('..', import.meta.url), encoding: 'utf8' },
  );
  return JSON.parse(output) as string[];
}

/** The files `npm pack` would put in the package. */
function packedFiles(): string[] {
  const output = execFileSync(
    process.platform === 'win32' ? 'npm.cmd' : 'npm',
    ['pack', '--dry-run', '--json', '--ignore-scripts'],
    {
      cwd: new URL('..', import.meta.url),
      encoding: 'utf8',
    },
  );
  const [{ files }] = JSON.parse(output) as [{ files: { path: string }[] }];
  return files.map((file) => file.path);
}

describe('the built package', () => {
  // test/exports.test.ts pins the lists; here the build must match the source under plain Node.
  it('durable-agent loads under plain Node and exports what the source exports', async () => {
    const source = await import('../src/index.js');
    expect(exportsUnderNode('durable-agent').sort()).toEqual(Object.keys(source).sort());
  });

  it.each(['worker', 'bridge', 'codec'])(
    'durable-agent/%s loads under plain Node and exports what the source exports',
    async (entryPoint) => {
      const source = (await import(`../src/${entryPoint}/index.ts`)) as object;
      expect(exportsUnderNode(`durable-agent/${entryPoint}`).sort()).toEqual(Object.keys(source).sort());
    },
  );

  it('durable-agent/testing loads under plain Node and exports what the source exports', async () => {
    const source = await import('../src/testing/index.js');
    expect(exportsUnderNode('durable-agent/testing').sort()).toEqual(Object.keys(source).sort());
  });

  it('durable-agent/workflows loads under plain Node and exports the conversation, agent-turn, schedule and spend-ledger workflows', () => {
    expect(exportsUnderNode('durable-agent/workflows').sort()).toEqual([
      'agentTurnWorkflow',
      'conversationWorkflow',
      'scheduledMessageWorkflow',
      'spendLedgerWorkflow',
    ]);
  });

  it('ships the JSON Schemas: npm pack includes every schemas/*.schema.json', () => {
    const files = packedFiles();
    const schemas = readdirSync(new URL('../schemas/', import.meta.url)).filter((file) =>
      file.endsWith('.schema.json'),
    );
    expect(schemas.length).toBeGreaterThan(0);
    expect(files.filter((file) => file.startsWith('schemas/'))).toEqual(
      expect.arrayContaining(schemas.map((file) => `schemas/${file}`)),
    );
  });

  it('ships the chat page of serve: npm pack includes its files in dist/, and the built bridge serves them', () => {
    const page = readdirSync(new URL('../src/bridge/page/', import.meta.url));
    expect(page).toEqual(expect.arrayContaining(['index.html', 'chat.js', 'chat.css']));
    expect(packedFiles()).toEqual(expect.arrayContaining(page.map((file) => `dist/bridge/page/${file}`)));
    const served = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { Hono } from 'hono';
         import { mountChatPage } from './dist/bridge/chat-page.js';
         const app = new Hono();
         mountChatPage(app);
         const pages = {};
         for (const file of ${JSON.stringify(page)}) {
           const response = await app.request(file === 'index.html' ? '/' : '/' + file);
           pages[file] = { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
         }
         console.log(JSON.stringify(pages));`,
      ],
      { cwd: new URL('..', import.meta.url), encoding: 'utf8' },
    );
    const pages = JSON.parse(served) as Record<string, { status: number; type: string; text: string }>;
    for (const file of page) {
      expect(pages[file]).toMatchObject({ status: 200 });
      expect(pages[file]!.text).toBe(readFileSync(new URL(`../src/bridge/page/${file}`, import.meta.url), 'utf8'));
    }
    expect(pages['index.html']!.type).toBe('text/html; charset=utf-8');
  });
});
