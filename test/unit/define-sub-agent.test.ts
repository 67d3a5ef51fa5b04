import { describe, expect, it } from 'vitest';
import { selectTools } from '../../src/shared/tool-patterns.js';
import { createToolRegistry, defineSubAgent, defineTool, ToolDefinitionError } from '../../src/worker/tools/index.js';

const echo = defineTool({
  name: 'echo',
  description: 'Echo.',
  parameters: { type: 'object', properties: {} },
  execute: () => 'echo',
});

describe('defineSubAgent', () => {
  it('is listed as the tool agent__<name> with one task argument, its settings recorded as plain data', () => {
    const registry = createToolRegistry({
      tools: [echo, defineSubAgent({ name: 'writer', description: 'Writes.', settings: { tools: ['echo'] } })],
    });
    expect(registry.definitions.map((tool) => tool.name)).toEqual(['echo', 'agent__writer']);
    expect(registry.definitions[1]).toMatchObject({
      server: 'agent',
      originalName: 'writer',
      source: 'agent',
      agent: { tools: ['echo'] },
      inputSchema: { required: ['task'] },
    });
  });

  it('the registry applies its approval policy to sub-agents as to its TypeScript tools', () => {
    const registry = createToolRegistry({
      requireApproval: 'writes',
      tools: [defineSubAgent({ name: 'writer', description: 'Writes.' })],
    });
    expect(registry.definitions[0]?.approval).toBeDefined();
  });

  it('refuses a name the model could not call, one with the MCP separator, and a missing description', () => {
    expect(() => defineSubAgent({ name: 'a b', description: 'x' })).toThrow(ToolDefinitionError);
    expect(() => defineSubAgent({ name: 'a__b', description: 'x' })).toThrow(/without "__"/);
    expect(() => defineSubAgent({ name: 'x'.repeat(60), description: 'x' })).toThrow(/at most 57 characters/);
    expect(() => defineSubAgent({ name: 'writer', description: '' })).toThrow(/"description" must say/);
    expect(() =>
      defineSubAgent({ name: 'writer', description: 'x', settings: { tools: 'echo' as unknown as string[] } }),
    ).toThrow(/list of tool names or patterns/);
  });

  it('two tools of one name are refused, sub-agents included', () => {
    const writer = defineSubAgent({ name: 'writer', description: 'Writes.' });
    expect(() => createToolRegistry({ tools: [writer, writer] })).toThrow(/Two tools are named "agent__writer"/);
  });
});

describe('selectTools', () => {
  const tools = [
    { name: 'echo', source: 'function' },
    { name: 'files__read', source: undefined },
    { name: 'agent__writer', source: 'agent' },
  ];

  it('`*` offers every tool but the sub-agents; a sub-agent only when a pattern names one', () => {
    expect(selectTools(tools, ['*']).map((tool) => tool.name)).toEqual(['echo', 'files__read']);
    expect(selectTools(tools, ['files__*', 'agent__*']).map((tool) => tool.name)).toEqual([
      'files__read',
      'agent__writer',
    ]);
    expect(selectTools(tools, [])).toEqual([]);
  });
});
