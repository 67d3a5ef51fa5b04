import { describe, expect, test } from 'vitest';
import { assignToolNames, sanitizeNamePart, TOOL_NAME_PATTERN, type ToolKey } from '../../src/worker/mcp/names.js';

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const result = [...items];
  for (let index = result.length - 1; index > 0; index -= 1) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const other = seed % (index + 1);
    [result[index], result[other]] = [result[other]!, result[index]!];
  }
  return result;
}

function namesByKey(keys: readonly ToolKey[]): Record<string, string> {
  const names = assignToolNames(keys);
  return Object.fromEntries(keys.map((key, index) => [`${key.server}/${key.tool}`, names[index]!]));
}

describe('tool names', () => {
  test('are namespaced server__tool and keep valid names as they are', () => {
    expect(assignToolNames([{ server: 'files', tool: 'read_file' }])).toEqual(['files__read_file']);
    expect(assignToolNames([{ server: 'everything', tool: 'get-sum' }])).toEqual(['everything__get-sum']);
  });

  test('sanitising replaces every character outside [a-zA-Z0-9_-] with _', () => {
    expect(sanitizeNamePart('github.search issues/v2')).toBe('github_search_issues_v2');
    expect(sanitizeNamePart('überprüfen')).toBe('_berpr_fen');
    expect(sanitizeNamePart('')).toBe('_');
    expect(assignToolNames([{ server: 'My Server', tool: 'fetch.url' }])).toEqual(['My_Server__fetch_url']);
  });

  test('every name matches ^[a-zA-Z0-9_-]{1,64}$, even for very long server and tool names', () => {
    const keys = [
      { server: 'a-server-with-a-rather-long-name', tool: 'a_tool_with_an_even_longer_name_that_goes_on_and_on' },
      { server: 's'.repeat(100), tool: 't' },
      { server: 'x', tool: '工具'.repeat(40) },
    ];
    for (const name of assignToolNames(keys)) expect(name).toMatch(TOOL_NAME_PATTERN);
  });

  test('long names that share a 64-character prefix stay distinct (hash suffix)', () => {
    const prefix = 'p'.repeat(70);
    const names = assignToolNames([
      { server: 'srv', tool: `${prefix}_one` },
      { server: 'srv', tool: `${prefix}_two` },
    ]);
    expect(names[0]).not.toBe(names[1]);
    expect(names[0]).toMatch(/^srv__p+_[0-9a-f]{8}$/);
    expect(names[0]!.length).toBe(64);
  });

  test('collisions: the name that needed no sanitising keeps it; the other gets a hash suffix', () => {
    const names = namesByKey([
      { server: 'web', tool: 'fetch.url' },
      { server: 'web', tool: 'fetch_url' },
    ]);
    expect(names['web/fetch_url']).toBe('web__fetch_url');
    expect(names['web/fetch.url']).toMatch(/^web__fetch_url_[0-9a-f]{8}$/);
  });

  test('collisions across servers ("a__b"+"c" vs "a"+"b__c") are resolved by server then tool name', () => {
    const names = namesByKey([
      { server: 'a__b', tool: 'c' },
      { server: 'a', tool: 'b__c' },
    ]);
    expect(names['a/b__c']).toBe('a__b__c');
    expect(names['a__b/c']).toMatch(/^a__b__c_[0-9a-f]{8}$/);
  });

  test('the mapping does not depend on the order in which servers list their tools', () => {
    const keys: ToolKey[] = [
      { server: 'web', tool: 'fetch.url' },
      { server: 'web', tool: 'fetch url' },
      { server: 'web', tool: 'fetch_url' },
      { server: 'web', tool: 'fetch/url' },
      { server: 'a__b', tool: 'c' },
      { server: 'a', tool: 'b__c' },
      { server: 'files', tool: 'x'.repeat(80) },
      { server: 'files', tool: `${'x'.repeat(80)}y` },
    ];
    const expected = namesByKey(keys);
    expect(new Set(Object.values(expected)).size).toBe(keys.length);
    for (let seed = 1; seed <= 20; seed += 1) expect(namesByKey(shuffled(keys, seed))).toEqual(expected);
  });

  test('a generated name that is already taken by a real tool gets a longer hash', () => {
    const first = assignToolNames([
      { server: 'web', tool: 'fetch_url' },
      { server: 'web', tool: 'fetch.url' },
    ])[1]!;
    const squatter = first.slice('web__'.length);
    const names = assignToolNames([
      { server: 'web', tool: 'fetch_url' },
      { server: 'web', tool: 'fetch.url' },
      { server: 'web', tool: squatter },
    ]);
    expect(new Set(names).size).toBe(3);
    expect(names[2]).toBe(first);
    expect(names[1]).toMatch(/^web__fetch_url_[0-9a-f]{12}$/);
  });
});
