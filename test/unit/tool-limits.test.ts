import { describe, expect, it } from 'vitest';
import {
  CHAT_COMPLETIONS_TOOL_LIMITS,
  DESCRIPTION_TRUNCATION_MARKER,
  ToolOffers,
  describeAdjustments,
  fitDescription,
  fitParameters,
  fitToolsToLimits,
} from '../../src/worker/activities/model/tool-limits.js';
import type { JsonObject, JsonValue, ToolDefinition } from '../../src/shared/types.js';

function tool(name: string, overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  const [server = 'files', originalName = name] = name.split('__');
  return {
    name,
    description: `The ${originalName} tool.`,
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    annotations: {},
    server,
    originalName,
    timeoutMs: 30_000,
    ...overrides,
  };
}

/** A description as long as the one `@modelcontextprotocol/server-sequential-thinking` publishes (2,781 characters). */
function longDescription(length = 2_781): string {
  const line = 'Each thought can build on, question, or revise previous insights as understanding deepens.\n';
  return line.repeat(Math.ceil(length / line.length)).slice(0, length);
}

/** Every array schema in `schema`, with its path, wherever it sits. */
function arraySchemas(schema: JsonValue, path = ''): { path: string; schema: JsonObject }[] {
  if (Array.isArray(schema)) return schema.flatMap((member, index) => arraySchemas(member, `${path}/${index}`));
  if (schema === null || typeof schema !== 'object') return [];
  const type = schema.type;
  const own = type === 'array' || (Array.isArray(type) && type.includes('array')) ? [{ path, schema }] : [];
  return [...own, ...Object.entries(schema).flatMap(([key, value]) => arraySchemas(value, `${path}/${key}`))];
}

describe('fitDescription', () => {
  it('tool limits: a description over 1,024 characters is cut to at most 1,024 and ends with the marker', () => {
    const original = longDescription();
    const fitted = fitDescription(original, 1_024);
    expect(original).toHaveLength(2_781);
    expect(fitted.length).toBeLessThanOrEqual(1_024);
    expect(fitted.endsWith(DESCRIPTION_TRUNCATION_MARKER)).toBe(true);
    const kept = fitted.slice(0, -DESCRIPTION_TRUNCATION_MARKER.length);
    expect(original.startsWith(kept)).toBe(true);
    // Cut at a word boundary, and not far from the limit.
    expect(original.charAt(kept.length)).toMatch(/\s/);
    expect(kept.length).toBeGreaterThan(1_024 - DESCRIPTION_TRUNCATION_MARKER.length - 80);
  });

  it('tool limits: a description of exactly the limit is left as it is', () => {
    const exact = 'x'.repeat(1_024);
    expect(fitDescription(exact, 1_024)).toBe(exact);
  });

  it('tool limits: a cut never splits a surrogate pair', () => {
    const emoji = '\u{1F600}'.repeat(1_000); // 2,000 UTF-16 code units, no spaces
    const fitted = fitDescription(emoji, 1_024);
    expect(fitted.length).toBeLessThanOrEqual(1_024);
    const kept = fitted.slice(0, -DESCRIPTION_TRUNCATION_MARKER.length);
    expect(kept).toBe('\u{1F600}'.repeat(kept.length / 2));
  });
});

describe('fitParameters: the top level', () => {
  it('tool limits: a schema that already fits comes back as the same object, unchanged', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: { tags: { type: 'array', items: { type: 'string' } }, any: {} },
      required: ['tags'],
      additionalProperties: false,
    };
    const fitted = fitParameters(schema);
    expect(fitted.changes).toEqual([]);
    expect(fitted.schema).toBe(schema);
  });

  it('tool limits: a schema without a top-level type gets type "object" and properties', () => {
    expect(fitParameters({ description: 'No arguments.' })).toEqual({
      schema: { description: 'No arguments.', type: 'object', properties: {} },
      changes: [
        'the top level had no type: set to "object"',
        'the top level had no properties: added an empty properties',
      ],
    });
    const withProperties = fitParameters({ properties: { id: { type: 'string' } } });
    expect(withProperties.schema).toEqual({ type: 'object', properties: { id: { type: 'string' } } });
  });

  it('tool limits: another top-level type, or no schema object at all, becomes an object of any properties', () => {
    expect(fitParameters({ type: 'string', description: 'A path.' }).schema).toEqual({
      type: 'object',
      properties: {},
      description: 'A path.',
    });
    for (const schema of [null, [], true, 'object']) {
      const fitted = fitParameters(schema);
      expect(fitted.schema).toEqual({ type: 'object', properties: {} });
      expect(fitted.changes[0]).toMatch(/not a JSON Schema object/);
    }
    expect(fitParameters({ type: ['object', 'null'], properties: {} }).schema).toEqual({
      type: 'object',
      properties: {},
    });
  });

  it('tool limits: a top-level anyOf is merged into one object; only what every branch requires stays required', () => {
    const fitted = fitParameters({
      type: 'object',
      anyOf: [
        { type: 'object', properties: { id: { type: 'string' }, verbose: { type: 'boolean' } }, required: ['id'] },
        { type: 'object', properties: { id: { type: 'number' }, name: { type: 'string' } }, required: ['id', 'name'] },
      ],
    });
    expect(fitted.schema).toEqual({
      type: 'object',
      properties: { id: { type: 'string' }, verbose: { type: 'boolean' }, name: { type: 'string' } },
      required: ['id'],
    });
    expect(fitted.changes).toEqual([
      'the top-level anyOf was merged into one object of all its properties (the alternatives are not shown)',
    ]);
  });

  it('tool limits: a top-level allOf is merged with every branch required; enum and not are removed', () => {
    const fitted = fitParameters({
      type: 'object',
      properties: { id: { type: 'string', description: 'own' } },
      required: ['id'],
      allOf: [
        { properties: { id: { type: 'number' }, page: { type: 'integer' } }, required: ['page'] },
        { properties: { size: { type: 'integer' } } },
      ],
      enum: [{ id: 'a' }],
      not: { required: ['secret'] },
    });
    expect(fitted.schema).toEqual({
      type: 'object',
      properties: { id: { type: 'string', description: 'own' }, page: { type: 'integer' }, size: { type: 'integer' } },
      required: ['id', 'page'],
    });
    expect(fitted.changes).toEqual([
      'the top-level allOf was merged into one object',
      'the top-level enum was removed',
      'the top-level not was removed',
    ]);
  });
});

describe('fitParameters: subschemas at any depth', () => {
  it('tool limits: every array schema without items gets items {}, however deep', () => {
    const schema: JsonObject = {
      type: 'object',
      properties: {
        paths: { type: 'array', description: 'Files to read.' },
        batches: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              rows: { type: 'array', items: { type: 'array' } },
              maybe: { anyOf: [{ type: 'string' }, { type: ['array', 'null'] }] },
            },
          },
        },
        options: { $ref: '#/$defs/options' },
      },
      $defs: { options: { type: 'object', properties: { flags: { type: 'array' } } } },
    };
    const before = JSON.stringify(schema);
    const fitted = fitParameters(schema);
    expect(arraySchemas(schema).filter((entry) => !('items' in entry.schema))).toHaveLength(4);
    expect(arraySchemas(fitted.schema).filter((entry) => !('items' in entry.schema))).toEqual([]);
    expect(fitted.changes).toEqual([
      'the array at properties.paths had no items: added items {} (any value)',
      'the array at properties.batches.items.properties.rows.items had no items: added items {} (any value)',
      'the array at properties.batches.items.properties.maybe.anyOf.1 had no items: added items {} (any value)',
      'the array at $defs.options.properties.flags had no items: added items {} (any value)',
    ]);
    // Only what was wrong changed, and the server's schema itself is left alone.
    expect(fitted.schema.properties).toMatchObject({
      paths: { type: 'array', description: 'Files to read.', items: {} },
    });
    expect(JSON.stringify(schema)).toBe(before);
  });

  it('tool limits: tuple items become one items schema of the allowed elements', () => {
    const fitted = fitParameters({
      type: 'object',
      properties: {
        point: { type: 'array', minItems: 2, maxItems: 2, items: [{ type: 'number' }, { type: 'string' }] },
        single: { type: 'array', items: [{ type: 'number' }] },
        untyped: { items: [] },
      },
    });
    expect(fitted.schema.properties).toEqual({
      point: { type: 'array', minItems: 2, maxItems: 2, items: { anyOf: [{ type: 'number' }, { type: 'string' }] } },
      single: { type: 'array', items: { type: 'number' } },
      untyped: { items: {} },
    });
  });

  it('tool limits: non-schema values, unknown type names and a malformed required are fixed', () => {
    const fitted = fitParameters({
      type: 'object',
      properties: {
        count: 'integer',
        anything: { type: 'any', description: 'Whatever.' },
        mixed: { type: ['string', 'date'] },
        nested: { type: 'object', properties: [], required: null },
      },
      required: ['count', 7],
    });
    expect(fitted.schema).toEqual({
      type: 'object',
      properties: {
        count: {},
        anything: { description: 'Whatever.' },
        mixed: { type: 'string' },
        nested: { type: 'object', properties: {} },
      },
      required: ['count'],
    });
    expect(fitted.changes).toHaveLength(6);
  });
});

describe('fitToolsToLimits', () => {
  it('tool limits: a tool within the limits is offered as the same object', () => {
    const readFile = tool('files__read_file');
    expect(fitToolsToLimits([readFile])).toEqual({ tools: [readFile], adjustments: [] });
    expect(fitToolsToLimits([readFile]).tools[0]).toBe(readFile);
  });

  it('tool limits: a changed tool keeps its name, server and annotations; the original is not touched', () => {
    const thinking = tool('thinking__sequentialthinking', {
      description: longDescription(),
      inputSchema: { type: 'object', properties: { branches: { type: 'array' } } },
      annotations: { readOnlyHint: true },
    });
    const { tools, adjustments } = fitToolsToLimits([thinking]);
    expect(tools[0]).toMatchObject({
      name: 'thinking__sequentialthinking',
      server: 'thinking',
      originalName: 'sequentialthinking',
      annotations: { readOnlyHint: true },
      inputSchema: { type: 'object', properties: { branches: { type: 'array', items: {} } } },
    });
    expect(tools[0]!.description.endsWith(DESCRIPTION_TRUNCATION_MARKER)).toBe(true);
    expect(thinking.description).toHaveLength(2_781);
    expect(thinking.inputSchema).toEqual({ type: 'object', properties: { branches: { type: 'array' } } });
    expect(adjustments).toEqual([
      {
        name: 'thinking__sequentialthinking',
        server: 'thinking',
        originalName: 'sequentialthinking',
        changes: [
          `description cut from 2781 to ${tools[0]!.description.length} characters`,
          'the array at properties.branches had no items: added items {} (any value)',
        ],
        refused: false,
      },
    ]);
  });

  it('tool limits: a tool whose name the API would refuse is left out, not renamed', () => {
    const good = tool('files__read_file');
    const spaced = tool('files__read file');
    const long = tool(`files__${'x'.repeat(60)}`);
    const { tools, adjustments } = fitToolsToLimits([spaced, good, long]);
    expect(tools).toEqual([good]);
    expect(adjustments.map((entry) => [entry.name, entry.refused])).toEqual([
      ['files__read file', true],
      [long.name, true],
    ]);
    expect(adjustments[0]!.changes[0]).toBe(
      `the name does not match ${String(CHAT_COMPLETIONS_TOOL_LIMITS.namePattern)}: left out`,
    );
  });

  it('tool limits: past 128 tools the rest are left out, in list order', () => {
    const many = Array.from({ length: 130 }, (_, index) => tool(`files__tool_${index}`));
    const { tools, adjustments } = fitToolsToLimits(many);
    expect(tools).toHaveLength(128);
    expect(tools.at(-1)?.name).toBe('files__tool_127');
    expect(adjustments.map((entry) => entry.name)).toEqual(['files__tool_128', 'files__tool_129']);
    expect(adjustments.every((entry) => entry.refused)).toBe(true);
  });

  it('tool limits: the log line names each tool, its server and what changed', () => {
    const { adjustments } = fitToolsToLimits([
      tool('thinking__sequentialthinking', { description: longDescription() }),
      tool('files__read file'),
      tool('files__read_file'),
    ]);
    const line = describeAdjustments(adjustments, 3);
    expect(line).toMatch(/^Fitted the tool list to the model API's limits: 1 of 3 tools changed, 1 left out/);
    expect(line).toContain(
      'thinking__sequentialthinking (tool "sequentialthinking" of MCP server "thinking"): description cut from 2781',
    );
    expect(line).toContain('files__read file (tool "read file" of MCP server "files"): the name does not match');
    expect(line).not.toContain('files__read_file');
  });
});

describe('ToolOffers', () => {
  function capture() {
    const warnings: { message: string; meta?: Record<string, unknown> }[] = [];
    return {
      warnings,
      log: { warn: (message: string, meta?: Record<string, unknown>) => warnings.push({ message, meta }) },
    };
  }

  it('tool limits: a list that needed changes is logged once, however many turns offer it', () => {
    const offers = new ToolOffers();
    const { warnings, log } = capture();
    const list = () => [
      tool('thinking__sequentialthinking', { description: longDescription() }),
      tool('files__read_file'),
    ];
    const first = list();
    const offered = offers.offer(first, log);
    expect(offers.offer(first, log)).toBe(offered); // the next round of the same turn
    offers.offer(list(), log); // the next turn lists an equal list again
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.meta).toMatchObject({ changedTools: ['thinking__sequentialthinking'], refusedTools: [] });

    offers.offer([...list(), tool('files__write_file')], log); // a different list is logged again
    expect(warnings).toHaveLength(2);
    offers.offer([tool('files__read_file')], log); // a list within the limits is never logged
    expect(warnings).toHaveLength(2);
  });

  it('tool limits: the oldest remembered list is forgotten first', () => {
    const offers = new ToolOffers(CHAT_COMPLETIONS_TOOL_LIMITS, 2);
    const { warnings, log } = capture();
    const list = (index: number) => [tool(`files__tool_${index}`, { inputSchema: {} })];
    for (const index of [1, 2, 1, 3, 2, 1]) offers.offer(list(index), log);
    // 1, 2 logged; 1 remembered; 3 logged (1 forgotten); 2 remembered; 1 logged again.
    expect(warnings).toHaveLength(4);
  });
});
