import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { handlerDescriptions } from '../src/workflows/definitions.js';

/**
 * docs/protocol.md is the contract for clients in any language: every handler the workflow defines has a row in its
 * "At a glance" table, and every payload of a public one has a JSON Schema in schemas/ that the row links.
 */

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), 'utf8');
const definitions = read('../src/workflows/definitions.ts');
const protocol = read('../docs/protocol.md');
const schemaDirectory = new URL('../schemas/', import.meta.url);
/** Schema file name → the title it describes (the TypeScript type's name). */
const schemaTitles = new Map(
  readdirSync(schemaDirectory)
    .filter((file) => file.endsWith('.schema.json'))
    .map((file) => [file, (JSON.parse(read(`../schemas/${file}`)) as { title: string }).title]),
);

interface Handler {
  name: string;
  kind: 'signal' | 'update' | 'query';
  /** The type names in its definition's type arguments: its argument and result types. */
  payloadTypes: string[];
}

/** Every `defineSignal`, `defineUpdate` and `defineQuery` of definitions.ts, read from its source. */
function definedHandlers(): Handler[] {
  const pattern = /define(Signal|Update|Query)<(.*?)>\('(\w+)'\)/gs;
  return [...definitions.matchAll(pattern)].map(([, kind, typeArguments, name]) => ({
    name: name!,
    kind: kind!.toLowerCase() as Handler['kind'],
    payloadTypes: [...typeArguments!.matchAll(/\b[A-Z]\w*/g)].map(([type]) => type),
  }));
}

/** The rows of the "At a glance" handler table: handler name → its cells. */
function glanceRows(): Map<string, string[]> {
  const section = protocol.split(/^## At a glance$/m)[1]?.split(/^## /m)[0] ?? '';
  const rows = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const name = /^`(\w+)`$/.exec(cells[0] ?? '')?.[1];
    if (name !== undefined && cells.length === 4) rows.set(name, cells);
  }
  return rows;
}

const isPublic = (name: string) =>
  (handlerDescriptions as Record<string, string | undefined>)[name]?.startsWith('Public.') === true;

describe('docs/protocol.md covers every handler of definitions.ts', () => {
  const handlers = definedHandlers();
  const rows = glanceRows();

  it('protocol: definitions.ts defines the handlers this test reads (it parses the source)', () => {
    expect(handlers.map(({ name }) => name).sort()).toEqual(Object.keys(handlerDescriptions).sort());
    expect(handlers.filter(({ name }) => isPublic(name)).length).toBeGreaterThanOrEqual(9);
  });

  it('protocol: every handler has a row in the "At a glance" table saying its kind, public or internal', () => {
    const missing = handlers.filter(({ name }) => !rows.has(name)).map(({ name }) => name);
    expect(missing, 'handlers without a row in docs/protocol.md, "At a glance"').toEqual([]);
    for (const { name, kind } of handlers) {
      expect(rows.get(name)?.[1], name).toBe(`${isPublic(name) ? 'public' : 'internal'} ${kind}`);
    }
    expect([...rows.keys()].sort(), 'rows for handlers definitions.ts does not define').toEqual(
      handlers.map(({ name }) => name).sort(),
    );
  });

  it('protocol: every payload type of a public handler has a schema in schemas/, linked from its row', () => {
    for (const { name, payloadTypes } of handlers.filter((handler) => isPublic(handler.name))) {
      const row = rows.get(name)?.join(' | ') ?? '';
      for (const type of payloadTypes) {
        const file = [...schemaTitles].find(([, title]) => title === type)?.[0];
        expect(
          file,
          `${name}: no schemas/*.schema.json titled ${type} (add it to scripts/generate-schemas.mjs)`,
        ).toBeDefined();
        expect(row, `${name}: its row names ${type} and links ../schemas/${file}`).toContain(`\`${type}\``);
        expect(row).toContain(`(../schemas/${file})`);
      }
    }
  });

  it('protocol: every public handler has its own section under "Handlers"', () => {
    const headings = protocol.split('\n').filter((line) => line.startsWith('### '));
    for (const { name } of handlers.filter((handler) => isPublic(handler.name))) {
      expect(
        headings.some((heading) => heading.includes(`\`${name}\``)),
        name,
      ).toBe(true);
    }
  });
});
