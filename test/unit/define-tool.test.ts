import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolRegistry, defineTool, ToolDefinitionError } from '../../src/worker/tools/index.js';
import type { ToolDefinition } from '../../src/shared/types.js';

const echo = (name: string) =>
  defineTool({ name, description: 'Echo.', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });

const mcpTool = (name: string): ToolDefinition => ({
  name,
  description: '',
  inputSchema: { type: 'object' },
  annotations: {},
  server: 'files',
  originalName: 'read',
  timeoutMs: 1000,
});

describe('defineTool', () => {
  it('writes zod parameters as the JSON Schema the model gets, without the draft marker', () => {
    expect(echo('echo').inputSchema).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
  });

  it('refuses a name with "__", which MCP tools use between server and tool, and says how to rename it', () => {
    expect(() => echo('files__read')).toThrow(ToolDefinitionError);
    expect(() => echo('files__read')).toThrow(/contains "__".*e\.g\. "files_read"/);
  });

  it('refuses names the model APIs reject, and parameters that are not an object schema', () => {
    expect(() => echo('look up')).toThrow(/letters, digits, "_" or "-"/);
    expect(() =>
      defineTool({ name: 'count', description: 'Count.', parameters: { type: 'string' }, execute: () => 1 }),
    ).toThrow(/"parameters" must be a zod object schema .* "type": "object"/);
  });
});

describe('the tool registry', () => {
  it('refuses two tools of one name', () => {
    expect(() => createToolRegistry({ tools: [echo('echo'), echo('echo')] })).toThrow(/Two tools are named "echo"/);
  });

  it('gives tools to the factory their dependencies, and records them as function tools run by the worker', () => {
    const registry = createToolRegistry({
      dependencies: { prefix: 'shop' },
      tools: ({ prefix }) => [echo(`${prefix}_echo`)],
      requireApproval: 'always',
    });
    expect(registry.definitions).toEqual([
      expect.objectContaining({
        name: 'shop_echo',
        source: 'function',
        server: 'worker',
        timeoutMs: 60_000,
        approval: { reason: 'server "worker" requires approval of every tool' },
      }),
    ]);
  });

  it('lists its tools first and leaves out an MCP tool whose (cut) name is one of them', () => {
    const registry = createToolRegistry({ tools: [echo('echo')] });
    const warnings: string[] = [];
    const listing = registry.withMcpTools(
      { tools: [mcpTool('echo'), mcpTool('files__read')], unavailable: [] },
      (message) => warnings.push(message),
    );
    expect(listing.tools.map((tool) => [tool.name, tool.source])).toEqual([
      ['echo', 'function'],
      ['files__read', undefined],
    ]);
    expect(warnings).toEqual([expect.stringContaining('is left out: its name "echo"')]);
  });
});
