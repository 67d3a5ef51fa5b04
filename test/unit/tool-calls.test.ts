import { ActivityFailure, ApplicationFailure, type RetryState, TimeoutFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import type { ToolCall, ToolDefinition } from '../../src/shared/types.js';
import {
  allowToolCalls,
  failedCallMayHaveRun,
  prepareToolCall,
  SYNTHETIC_RESULTS,
  toolMessage,
} from '../../src/workflows/tool-calls.js';

function tool(name: string): ToolDefinition {
  return {
    name,
    description: `The ${name} tool.`,
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    server: name.split('__')[0] ?? name,
    originalName: name.split('__')[1] ?? name,
    timeoutMs: 30_000,
  };
}

const readFile = tool('files__read_file');
const search = tool('memory__search');
const tools = new Map([readFile, search].map((definition) => [definition.name, definition]));

function call(name: string, args: string): ToolCall {
  return { id: 'call_1', name, arguments: args };
}

describe('prepareToolCall', () => {
  it('tool calls: a known tool with a JSON object is dispatched with the parsed arguments and its definition', () => {
    const prepared = prepareToolCall(call('files__read_file', '{"path":"/tmp/a.txt","lines":[1,2]}'), tools);

    expect(prepared).toEqual({
      kind: 'dispatch',
      call: call('files__read_file', '{"path":"/tmp/a.txt","lines":[1,2]}'),
      tool: readFile,
      arguments: { path: '/tmp/a.txt', lines: [1, 2] },
    });
  });

  it('tool calls: empty or blank arguments mean an empty object', () => {
    for (const args of ['', '   ', '\n']) {
      const prepared = prepareToolCall(call('memory__search', args), tools);
      expect(prepared).toMatchObject({ kind: 'dispatch', arguments: {} });
    }
  });

  it('tool calls: an unknown tool is rejected with a tool message that lists the available tools', () => {
    const prepared = prepareToolCall(call('files__delete', '{}'), tools);

    expect(prepared).toEqual({
      kind: 'reject',
      call: call('files__delete', '{}'),
      message: {
        role: 'tool',
        toolCallId: 'call_1',
        name: 'files__delete',
        outcome: 'unknown_tool',
        content: 'Error: there is no tool named "files__delete". Available tools: files__read_file, memory__search.',
      },
    });
  });

  it('tool calls: an unknown tool in a turn without tools says that no tools are available', () => {
    const prepared = prepareToolCall(call('files__read_file', '{}'), new Map());

    expect(prepared.kind).toBe('reject');
    expect(prepared.kind === 'reject' && prepared.message.content).toBe(
      'Error: there is no tool named "files__read_file". No tools are available.',
    );
  });

  it('tool calls: invalid JSON is rejected as invalid_arguments with the parser reason and what to do', () => {
    const prepared = prepareToolCall(call('files__read_file', '{"path": '), tools);

    expect(prepared.kind).toBe('reject');
    if (prepared.kind !== 'reject') return;
    expect(prepared.message).toMatchObject({ role: 'tool', toolCallId: 'call_1', outcome: 'invalid_arguments' });
    let reason = '';
    try {
      JSON.parse('{"path": ');
    } catch (error) {
      reason = (error as Error).message;
    }
    expect(prepared.message.content).toBe(
      `Error: the arguments for files__read_file are not valid JSON (${reason}). ` +
        'Call the tool again with a JSON object that matches its parameters schema.',
    );
  });

  it.each([
    ['[1,2]', 'an array'],
    ['"path"', 'string'],
    ['42', 'number'],
    ['true', 'boolean'],
  ])('tool calls: JSON arguments %s that are not an object are rejected, naming %s', (args, kind) => {
    const prepared = prepareToolCall(call('memory__search', args), tools);

    expect(prepared.kind).toBe('reject');
    expect(prepared.kind === 'reject' && prepared.message).toEqual({
      role: 'tool',
      toolCallId: 'call_1',
      name: 'memory__search',
      outcome: 'invalid_arguments',
      content: `Error: the arguments for memory__search must be a JSON object, not ${kind}.`,
    });
  });

  it('tool calls: the tool name is checked before the arguments', () => {
    const prepared = prepareToolCall(call('nope', 'not json'), tools);
    expect(prepared.kind === 'reject' && prepared.message.outcome).toBe('unknown_tool');
  });
});

describe('SYNTHETIC_RESULTS', () => {
  const pending = call('files__read_file', '{}');

  it('tool calls: every synthetic result answers its call id with its own outcome', () => {
    const results = [
      [SYNTHETIC_RESULTS.unavailable(pending, 'server down'), 'unavailable'],
      [SYNTHETIC_RESULTS.cancelled(pending), 'cancelled'],
      [SYNTHETIC_RESULTS.budgetExhausted(pending), 'budget_exhausted'],
      [SYNTHETIC_RESULTS.timeBudgetCancelled(pending), 'budget_exhausted'],
    ] as const;
    for (const [message, outcome] of results) {
      expect(message).toMatchObject({ role: 'tool', toolCallId: 'call_1', name: 'files__read_file', outcome });
    }
  });

  it('tool calls: an unavailable tool says why and that it gave no result', () => {
    expect(SYNTHETIC_RESULTS.unavailable(pending, 'the server "files" is not connected').content).toBe(
      'Error: the tool files__read_file is unavailable right now (the server "files" is not connected) and gave no ' +
        'result. Continue without it or try again later.',
    );
  });

  it('tool calls: a budget result names the tool call budget and asks the model to answer with what it has', () => {
    expect(SYNTHETIC_RESULTS.budgetExhausted(pending).content).toBe(
      "Not run: the turn's tool call budget is used up. Answer with the information you already have.",
    );
  });

  it('tool calls: a cancellation by the time budget warns that the tool may have taken effect', () => {
    expect(SYNTHETIC_RESULTS.timeBudgetCancelled(pending).content).toMatch(/may or may not have taken effect/);
    expect(SYNTHETIC_RESULTS.cancelled(pending).content).toMatch(/user interrupted/);
  });

  it('tool calls: an outcome-unknown result says the call may have run and warns against repeating it', () => {
    const message = SYNTHETIC_RESULTS.outcomeUnknown(pending, 'the worker stopped');
    expect(message).toMatchObject({ toolCallId: 'call_1', outcome: 'outcome_unknown' });
    expect(message.content).toBe(
      'The call to files__read_file may or may not have taken effect: the worker stopped. It was not retried ' +
        'automatically because running it twice could repeat its effect. Check the current state (for example with ' +
        'a read-only tool) before calling it again.',
    );
    expect(message.content).not.toMatch(/try again later/i);
  });

  it('tool calls: toolMessage builds a tool message from a call, an outcome and content', () => {
    expect(toolMessage(pending, 'ok', 'file contents')).toEqual({
      role: 'tool',
      toolCallId: 'call_1',
      name: 'files__read_file',
      outcome: 'ok',
      content: 'file contents',
    });
  });
});

describe('allowToolCalls', () => {
  const calls = [
    { id: 'a', name: 'files__read_file', arguments: '{}' },
    { id: 'b', name: 'nope', arguments: '{}' },
    { id: 'c', name: 'memory__search', arguments: '{}' },
    { id: 'd', name: 'files__read_file', arguments: '{}' },
  ];
  const prepared = calls.map((entry) => prepareToolCall(entry, tools));

  it('tool calls: the first calls that fit the allowance run, in the model order; the rest get budget_exhausted', () => {
    const planned = allowToolCalls(prepared, 2);

    expect(planned.map((entry) => entry.kind)).toEqual(['dispatch', 'reject', 'dispatch', 'reject']);
    expect(planned[3]).toEqual({
      kind: 'reject',
      call: calls[3],
      message: SYNTHETIC_RESULTS.budgetExhausted(calls[3]!),
    });
    expect(planned[3]).toMatchObject({ message: { outcome: 'budget_exhausted', toolCallId: 'd' } });
  });

  it('tool calls: a rejected call does not use the allowance and keeps its own message', () => {
    const planned = allowToolCalls(prepared, 3);

    expect(planned.map((entry) => entry.kind)).toEqual(['dispatch', 'reject', 'dispatch', 'dispatch']);
    expect(planned[1]).toBe(prepared[1]);
  });

  it('tool calls: with no allowance left nothing runs; with room for all, the prepared calls are unchanged', () => {
    expect(allowToolCalls(prepared, 0).every((entry) => entry.kind === 'reject')).toBe(true);
    expect(allowToolCalls(prepared, 10)).toEqual(prepared);
  });
});

describe('failedCallMayHaveRun', () => {
  const LAST_ATTEMPT = 13;
  const sideEffects = {};
  const readOnly = { readOnlyHint: true };
  const idempotent = { idempotentHint: true };
  const activityFailure = (cause: Error, retryState: RetryState = 'MAXIMUM_ATTEMPTS_REACHED') =>
    new ActivityFailure('Activity task failed', 'callTool', '7', retryState, 'worker-1', cause);
  const heartbeatTimeout = (details: unknown) => new TimeoutFailure('activity Heartbeat timeout', details, 'HEARTBEAT');
  const transport = (requestSent: boolean) =>
    ApplicationFailure.create({
      type: FailureType.ToolTransportError,
      message: 'MCP server "test" could not be reached',
      details: [{ server: 'test', requestSent }],
    });

  it('tool calls: a tool with side effects whose last attempt was lost may have run, whatever it last recorded', () => {
    for (const details of [undefined, { phase: 'connecting' }, { phase: 'sent' }, { phase: 'not_sent' }]) {
      expect(failedCallMayHaveRun(activityFailure(heartbeatTimeout(details)), sideEffects, LAST_ATTEMPT)).toBe(true);
    }
    const startToClose = new TimeoutFailure('activity StartToClose timeout', { phase: 'sent' }, 'START_TO_CLOSE');
    expect(failedCallMayHaveRun(activityFailure(startToClose), sideEffects, LAST_ATTEMPT)).toBe(true);
    // A worker that shut down mid-call: the SDK's own failure, nothing of ours says the request never left.
    const shutdown = new ApplicationFailure('Worker is shutting down', 'WorkerShutdown');
    expect(failedCallMayHaveRun(activityFailure(shutdown), sideEffects, LAST_ATTEMPT)).toBe(true);
    expect(failedCallMayHaveRun(activityFailure(new Error('unexpected')), sideEffects, LAST_ATTEMPT)).toBe(true);
  });

  it('tool calls: only a not_sent record of the last attempt itself proves a timed-out call never ran', () => {
    const lastNotSent = heartbeatTimeout({ phase: 'not_sent', attempt: LAST_ATTEMPT });
    expect(failedCallMayHaveRun(activityFailure(lastNotSent), sideEffects, LAST_ATTEMPT)).toBe(false);
    // An earlier attempt's record says nothing about the attempts after it.
    const earlierNotSent = heartbeatTimeout({ phase: 'not_sent', attempt: LAST_ATTEMPT - 1 });
    expect(failedCallMayHaveRun(activityFailure(earlierNotSent), sideEffects, LAST_ATTEMPT)).toBe(true);
    // Not ended by the attempt limit: which attempt was the last is unknown.
    expect(failedCallMayHaveRun(activityFailure(lastNotSent, 'TIMEOUT'), sideEffects, LAST_ATTEMPT)).toBe(true);
  });

  it("tool calls: the activity's own failures before sending prove it: transport (requestSent false), not configured", () => {
    expect(failedCallMayHaveRun(activityFailure(transport(false)), sideEffects, LAST_ATTEMPT)).toBe(false);
    expect(failedCallMayHaveRun(activityFailure(transport(true)), sideEffects, LAST_ATTEMPT)).toBe(true);
    const notConfigured = ApplicationFailure.create({ type: FailureType.ToolNotConfigured, nonRetryable: true });
    expect(failedCallMayHaveRun(activityFailure(notConfigured), sideEffects, LAST_ATTEMPT)).toBe(false);
  });

  it('tool calls: a read-only or idempotent tool is "unavailable" whatever the failure: there is just no result', () => {
    for (const annotations of [readOnly, idempotent]) {
      for (const cause of [heartbeatTimeout({ phase: 'sent' }), transport(true), new Error('unexpected')]) {
        expect(failedCallMayHaveRun(activityFailure(cause), annotations, LAST_ATTEMPT)).toBe(false);
      }
    }
  });
});
