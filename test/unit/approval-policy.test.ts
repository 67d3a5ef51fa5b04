import { describe, expect, test } from 'vitest';
import { McpConfigError, parseMcpConfig } from '../../src/worker/mcp/config.js';
import { toToolDefinitions } from '../../src/worker/mcp/tool-definitions.js';
import type { ToolDefinition } from '../../src/shared/types.js';
import {
  approvalReason,
  type ApprovalSubject,
  approvalTimeout,
  policyReason,
  serverApproval,
} from '../../src/shared/approval-policy.js';
import { formatDuration } from '../../src/workflows/turn-approvals.js';

const FILE = '/etc/durable-agent/mcp.json';
const parse = (server: Record<string, unknown>) =>
  parseMcpConfig(JSON.stringify({ mcpServers: { files: { command: 'files-server', ...server } } }), FILE, {});

const readFile = { name: 'files__read_file', originalName: 'read_file', annotations: { readOnlyHint: true } };
const writeFile = { name: 'files__write_file', originalName: 'write_file', annotations: { destructiveHint: true } };
const unannotated = { name: 'files__move', originalName: 'move', annotations: {} };

function definition(tool: ApprovalSubject, approval?: string): ToolDefinition {
  return {
    ...tool,
    description: '',
    inputSchema: { type: 'object' },
    server: 'files',
    timeoutMs: 1_000,
    ...(approval ? { approval: { reason: approval } } : {}),
  };
}

describe('approval policies', () => {
  test('never, always, writes (anything not annotated read-only) and lists of names or patterns', () => {
    expect(policyReason('never', writeFile, 'x')).toBeUndefined();
    expect(policyReason('always', readFile, 'server "files"')).toBe('server "files" requires approval of every tool');
    expect(policyReason('writes', readFile, 'x')).toBeUndefined();
    expect(policyReason('writes', writeFile, 'x')).toBe('x requires approval of tools not annotated read-only');
    // Annotations are hints: a tool that says nothing is treated as one that writes.
    expect(policyReason('writes', unannotated, 'x')).toBeDefined();
    expect(policyReason(['write_*'], writeFile, 'x')).toBe('x lists "write_*" as needing approval');
    expect(policyReason(['files__move'], unannotated, 'x')).toBeDefined();
    expect(policyReason(['move'], readFile, 'x')).toBeUndefined();
  });

  test("a server's approvalNotRequired exempts tools whatever requireApproval says", () => {
    const server = { name: 'files', requireApproval: 'always' as const, approvalNotRequired: ['read_*'] };
    expect(serverApproval(server, readFile)).toBeUndefined();
    expect(serverApproval(server, writeFile)).toEqual({ reason: 'server "files" requires approval of every tool' });
    expect(serverApproval({ name: 'files' }, writeFile)).toBeUndefined();
  });

  test("the conversation's require overrides every server's policy; tools allowed for good never wait", () => {
    const recorded = definition(writeFile, 'server "files" requires approval of every tool');
    expect(approvalReason(recorded, undefined, new Set())).toBe('server "files" requires approval of every tool');
    expect(approvalReason(recorded, { require: 'never' }, new Set())).toBeUndefined();
    expect(approvalReason(definition(readFile), { require: 'always' }, new Set())).toBe(
      'the conversation requires approval of every tool',
    );
    expect(approvalReason(recorded, { require: 'always' }, new Set(['files__write_file']))).toBeUndefined();
  });

  test('settings that are not valid err on the side of asking, and of waiting', () => {
    const reason = approvalReason(definition(readFile), { require: 'sometimes' as never }, new Set());
    expect(reason).toBe('the conversation\'s approval.require is not a policy ("sometimes"), so every call waits');
    expect(approvalTimeout({ timeoutMs: 60_000 })).toBe(60_000);
    for (const timeoutMs of [0, -5, Number.NaN, '60000' as never, undefined]) {
      expect(approvalTimeout({ timeoutMs })).toBeUndefined();
    }
    expect(approvalTimeout(undefined)).toBeUndefined();
  });

  test('timeouts read as people say them', () => {
    expect(formatDuration(2 * 86_400_000)).toBe('2 days');
    expect(formatDuration(90_000)).toBe('1.5 minutes');
    expect(formatDuration(1_000)).toBe('1 second');
  });
});

describe('requireApproval in the mcpServers file', () => {
  test('is parsed with approvalNotRequired; a server without them has neither key', () => {
    expect(parse({ requireApproval: 'writes', approvalNotRequired: ['list_*'] }).servers[0]).toMatchObject({
      requireApproval: 'writes',
      approvalNotRequired: ['list_*'],
    });
    expect(parse({ requireApproval: ['write_file', 'move_*'] }).servers[0]).toMatchObject({
      requireApproval: ['write_file', 'move_*'],
    });
    const plain = parse({}).servers[0]!;
    expect('requireApproval' in plain || 'approvalNotRequired' in plain).toBe(false);
  });

  test('a wrong value is an McpConfigError that names the file, server and key and says what fits', () => {
    for (const requireApproval of ['sometimes', true, [1], ['']]) {
      expect(() => parse({ requireApproval })).toThrow(McpConfigError);
    }
    expect(() => parse({ requireApproval: 'sometimes' })).toThrow(
      `${FILE}: server "files" key "requireApproval": expected "never", "always", "writes" or an array of tool names, ` +
        'got string "sometimes".',
    );
    expect(() => parse({ approvalNotRequired: 'read_file' })).toThrow(
      `${FILE}: server "files" key "approvalNotRequired": expected an array of strings, got string "read_file".`,
    );
  });

  test('the worker records the policy on the tools that need it only, so other tool lists are unchanged', () => {
    const [config] = parse({ requireApproval: 'writes', approvalNotRequired: ['move'] }).servers;
    const [plainConfig] = parse({}).servers;
    const tools = [
      { name: 'read_file', inputSchema: { type: 'object' as const }, annotations: { readOnlyHint: true } },
      { name: 'write_file', inputSchema: { type: 'object' as const } },
      { name: 'move', inputSchema: { type: 'object' as const } },
    ];
    const definitions = toToolDefinitions([{ config: config!, tools }]);
    expect(definitions.map((tool) => tool.approval)).toEqual([
      undefined,
      { reason: 'server "files" requires approval of tools not annotated read-only' },
      undefined,
    ]);
    expect(definitions.filter((tool) => 'approval' in tool).map((tool) => tool.name)).toEqual(['files__write_file']);
    const plain = toToolDefinitions([{ config: plainConfig!, tools }]);
    expect(plain.some((tool) => 'approval' in tool)).toBe(false);
  });
});
