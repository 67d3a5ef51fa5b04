import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, test } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import type { JsonObject, ToolDefinition } from '../../src/shared/types.js';
import type { PendingApproval } from '../../src/shared/approval-messages.js';
import { Approvals } from '../../src/workflows/approvals.js';
import { EventLog } from '../../src/workflows/stream-events.js';

const schema: JsonObject = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: { path: { type: 'string', minLength: 1 }, lines: { type: 'integer', minimum: 1 } },
  required: ['path'],
  additionalProperties: false,
};
const tool: ToolDefinition = {
  name: 'files__write_file',
  originalName: 'write_file',
  server: 'files',
  description: '',
  inputSchema: schema,
  annotations: {},
  timeoutMs: 1_000,
};

function pending(callId: string, name = tool.name): PendingApproval {
  return {
    callId,
    turn: 1,
    tool: name,
    server: 'files',
    arguments: { path: '/data/a.md' },
    reason: 'server "files" requires approval of every tool',
    requestedAt: '2026-11-23T10:00:00.000Z',
  };
}

function setUp(allowed?: string[]) {
  const events = new EventLog(0, undefined);
  const hooks = { changes: 0, approvalChanges: 0 };
  const approvals = new Approvals(allowed, events, {
    changed: () => hooks.changes++,
    approvalsChanged: () => hooks.approvalChanges++,
  });
  return { approvals, events, hooks };
}

function failure(action: () => unknown): ApplicationFailure {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ApplicationFailure);
    return error as ApplicationFailure;
  }
  throw new Error('expected a refusal');
}

describe('Approvals', () => {
  test('a request is pending, streamed and published until it is decided; the turn takes the decision once', () => {
    const { approvals, events, hooks } = setUp();
    approvals.request(pending('call_1'), tool);
    expect(approvals.pending).toEqual([pending('call_1')]);
    expect(hooks).toEqual({ changes: 0, approvalChanges: 1 });
    const decision = approvals.approve({ callId: 'call_1', by: 'ops' });
    expect(decision).toMatchObject({ callId: 'call_1', turn: 1, tool: tool.name, decision: 'approved', by: 'ops' });
    expect(approvals.pending).toEqual([]);
    expect(approvals.isDecided('call_1')).toBe(true);
    expect(approvals.take('call_1')).toEqual(decision);
    expect(approvals.take('call_1')).toBeUndefined();
    expect(events.carried().map((event) => event.type)).toEqual(['approval_requested', 'approval_decided']);
    expect(hooks.approvalChanges).toBe(2);
  });

  test('unknown and decided call ids are refused by name, and nothing changes', () => {
    const { approvals } = setUp();
    approvals.request(pending('call_1'), tool);
    const unknown = failure(() => approvals.validateApprove({ callId: 'call_9' }));
    expect(unknown.type).toBe(FailureType.UnknownApproval);
    expect(unknown.message).toContain('Waiting: call_1.');
    expect(failure(() => approvals.validateDeny({ callId: 'call_9', reason: 'no' })).type).toBe(
      FailureType.UnknownApproval,
    );
    expect(approvals.pending).toHaveLength(1);
    approvals.deny({ callId: 'call_1', reason: 'Not today.' });
    expect(failure(() => approvals.validateApprove({ callId: 'call_1' })).type).toBe(FailureType.AlreadyDecided);
    expect(failure(() => approvals.deny({ callId: 'call_1', reason: 'again' })).type).toBe(FailureType.AlreadyDecided);
  });

  test("edited arguments are checked against the tool's schema (whatever draft it names); a denial needs a reason", () => {
    const { approvals } = setUp();
    approvals.request(pending('call_1'), tool);
    const missing = failure(() => approvals.validateApprove({ callId: 'call_1', arguments: { lines: 0 } }));
    expect(missing.type).toBe(FailureType.InvalidArguments);
    expect(missing.message).toContain("must have required property 'path'");
    expect(missing.message).toContain('/lines must be >= 1');
    const extra = failure(() => approvals.validateApprove({ callId: 'call_1', arguments: { path: 'x', mode: 'w' } }));
    expect(extra.message).toContain('must NOT have additional properties');
    expect(failure(() => approvals.validateApprove({ callId: 'call_1', arguments: [] as never })).type).toBe(
      FailureType.InvalidArguments,
    );
    expect(failure(() => approvals.validateDeny({ callId: 'call_1', reason: '  ' })).type).toBe(
      FailureType.InvalidArguments,
    );
    expect(approvals.pending).toEqual([pending('call_1')]);
    const decision = approvals.approve({ callId: 'call_1', arguments: { path: '/data/b.md', lines: 3 } });
    expect(decision.arguments).toEqual({ path: '/data/b.md', lines: 3 });
  });

  test('"always" allows the tool for good, approves its other waiting calls, and is carried to the next run', () => {
    const { approvals } = setUp();
    approvals.request(pending('call_1'), tool);
    approvals.request(pending('call_2'), tool);
    approvals.request(pending('call_3', 'files__move'), { ...tool, name: 'files__move' });
    approvals.approve({ callId: 'call_1', always: true, by: 'ops' });
    expect(approvals.pending.map((entry) => entry.callId)).toEqual(['call_3']);
    expect(approvals.take('call_2')).toMatchObject({ decision: 'approved', by: 'ops' });
    expect([...approvals.allowedTools]).toEqual([tool.name]);
    expect(approvals.carried()).toEqual({ allowedTools: [tool.name] });
    expect(setUp([tool.name]).approvals.allowedTools.has(tool.name)).toBe(true);
    expect(setUp().approvals.carried()).toEqual({});
  });
});
