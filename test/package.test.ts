import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
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

describe('the built package', () => {
  // test/exports.test.ts pins the lists; here the build must match the source under plain Node.
  it('durable-agent loads under plain Node and exports what the source exports', async () => {
    const source = await import('../src/index.js');
    expect(exportsUnderNode('durable-agent').sort()).toEqual(Object.keys(source).sort());
  });

  it('durable-agent/testing loads under plain Node and exports what the source exports', async () => {
    const source = await import('../src/testing/index.js');
    expect(exportsUnderNode('durable-agent/testing').sort()).toEqual(Object.keys(source).sort());
  });

  it('durable-agent/workflows loads under plain Node and exports the conversation workflow', () => {
    expect(exportsUnderNode('durable-agent/workflows')).toEqual(['conversationWorkflow']);
  });

  it('ships the JSON Schemas: npm pack includes every schemas/*.schema.json', () => {
    const output = execFileSync(
      process.platform === 'win32' ? 'npm.cmd' : 'npm',
      ['pack', '--dry-run', '--json', '--ignore-scripts'],
      {
        cwd: new URL('..', import.meta.url),
        encoding: 'utf8',
      },
    );
    const [{ files }] = JSON.parse(output) as [{ files: { path: string }[] }];
    const schemas = readdirSync(new URL('../schemas/', import.meta.url)).filter((file) =>
      file.endsWith('.schema.json'),
    );
    expect(schemas.length).toBeGreaterThan(0);
    expect(files.map((file) => file.path).filter((file) => file.startsWith('schemas/'))).toEqual(
      expect.arrayContaining(schemas.map((file) => `schemas/${file}`)),
    );
  });
});
