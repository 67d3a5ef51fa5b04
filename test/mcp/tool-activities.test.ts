import path from 'node:path';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment as SdkMockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  createToolActivities,
  type ToolActivities,
  type ToolCallHeartbeat,
} from '../../src/worker/activities/tool-calls/call.js';
import type { McpPool } from '../../src/worker/mcp/pool.js';
import type { CallToolInput, CallToolResult, JsonObject, ToolDefinition } from '../../src/shared/types.js';
import { FailureType } from '../../src/shared/errors.js';
import { countTestServerEvents, startTestMcpServer } from '../../src/testing/mcp-test-server.js';
import {
  httpServer,
  rejectionOf,
  stdioServer,
  testServerStdio,
  usePools,
  useTemporaryDirectories,
  waitFor,
} from './helpers.js';

const createPool = usePools();
const temporaryDirectory = useTemporaryDirectories();

/** A real activity context; failures the tests expect are not logged. */
class MockActivityEnvironment extends SdkMockActivityEnvironment {
  constructor(info: ConstructorParameters<typeof SdkMockActivityEnvironment>[0] = {}) {
    super(info, { logger: new DefaultLogger('ERROR') });
  }

  /** `run` with the activity's own result type (the SDK's generic signature infers `unknown`). */
  override run<A extends unknown[], R>(activity: (...args: A) => Promise<R>, ...args: A): Promise<R> {
    return super.run<A, R, (...args: A) => Promise<R>>(activity, ...args);
  }
}

/** Runs an activity in a real activity context and collects its heartbeats. */
function activityEnvironment(info: ConstructorParameters<typeof MockActivityEnvironment>[0] = {}) {
  const environment = new MockActivityEnvironment(info);
  const heartbeats: ToolCallHeartbeat[] = [];
  environment.on('heartbeat', (details: ToolCallHeartbeat) => heartbeats.push(details));
  return { environment, heartbeats };
}

/** Our v1-built test server never answers `input_required`: every call ends with a result for the model. */
function answeredOnly(all: ToolActivities) {
  return {
    ...all,
    callTool: async (input: CallToolInput): Promise<CallToolResult> => {
      const result = await all.callTool(input);
      if (result.outcome === 'input_required') throw new Error('the legacy test server answered input_required');
      if (result.outcome === 'task') throw new Error('the test server answered a call without `task` with a task');
      return result;
    },
  };
}

describe('tool activities over stdio (MockActivityEnvironment, our test server)', () => {
  let counterFile: string;
  let pool: McpPool;
  let activities: ReturnType<typeof answeredOnly>;
  let tools: Map<string, ToolDefinition>;
  const counts = () => countTestServerEvents(counterFile);

  beforeEach(async () => {
    counterFile = path.join(temporaryDirectory(), 'events.jsonl');
    pool = createPool([testServerStdio('test', counterFile, { timeoutMs: 20_000 })]);
    activities = answeredOnly(createToolActivities({ pool, maxResultChars: 500 }));
    const { tools: listed } = await new MockActivityEnvironment().run(activities.listTools);
    tools = new Map(listed.map((tool) => [tool.originalName, tool]));
  });

  /** The input the workflow would build from its recorded tool list; `tool` can override what it recorded. */
  function input(toolName: string, args: JsonObject = {}, tool: Partial<ToolDefinition> = {}): CallToolInput {
    const definition = tools.get(toolName) ?? {
      ...tools.get('echo')!,
      name: `test__${toolName}`,
      originalName: toolName,
    };
    const { name, server, originalName, annotations, timeoutMs } = { ...definition, ...tool };
    return { toolCallId: 'call_1', tool: { name, server, originalName, annotations, timeoutMs }, arguments: args };
  }

  test('listTools returns namespaced tools with their schemas and annotations, as plain JSON', async () => {
    const echo = tools.get('echo')!;
    expect(echo).toMatchObject({
      name: 'test__echo',
      server: 'test',
      originalName: 'echo',
      description: 'Returns the text it is given.',
      annotations: { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
      timeoutMs: 20_000,
    });
    expect(echo.inputSchema).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect(tools.get('increment')?.annotations).toEqual({});
    const listed = [...tools.values()];
    expect(JSON.parse(JSON.stringify(listed))).toEqual(listed);
  });

  test('a result becomes { outcome: ok } with the content as text', async () => {
    const result = await new MockActivityEnvironment().run(activities.callTool, input('echo', { text: 'hello' }));
    expect(result).toEqual({ outcome: 'ok', content: 'hello', truncated: false });
  });

  test('an isError result is a normal result the model sees: { outcome: error }', async () => {
    const result = await new MockActivityEnvironment().run(
      activities.callTool,
      input('fail', { message: 'disk full' }),
    );
    expect(result).toEqual({ outcome: 'error', content: 'disk full', truncated: false });
  });

  test('a JSON-RPC error answer is an error result the model sees, not a failed activity', async () => {
    const result = await new MockActivityEnvironment().run(activities.callTool, input('protocol_error'));
    expect(result.outcome).toBe('error');
    expect(result.content).toBe(
      'MCP server "test", tool "protocol_error" answered with error -32602: protocol_error always answers with a JSON-RPC error',
    );
  });

  test('a result longer than maxResultChars is cut with an explicit marker', async () => {
    const result = await new MockActivityEnvironment().run(activities.callTool, input('big', { chars: 5000 }));
    expect(result.truncated).toBe(true);
    expect(result.content.length).toBeLessThanOrEqual(500);
    expect(result.content).toMatch(/^0123456789.*\n…\[truncated: \d+ of 5000 characters shown\]$/s);
  });

  test('sends no heartbeat of its own before the request; the periodic heartbeat says { phase: sent } while it runs', async () => {
    // No heartbeat timeout: the interval is the longest (10 s), no periodic heartbeat comes within the test, and any
    // heartbeat of this call would be one the activity sent itself.
    const { environment, heartbeats } = activityEnvironment();
    await environment.run(activities.callTool, input('echo', { text: 'quick' }));
    expect(heartbeats).toEqual([]);

    // A third of the heartbeat timeout: every 100 ms.
    const slow = activityEnvironment({ heartbeatTimeoutMs: 300 });
    await slow.environment.run(activities.callTool, input('slow', { delayMs: 800 }));
    expect(slow.heartbeats.length).toBeGreaterThanOrEqual(4);
    expect(slow.heartbeats.every((details) => details.phase === 'sent')).toBe(true);
  });

  test('a tool the server no longer offers fails non-retryable ToolNotConfigured', async () => {
    const failure = await rejectionOf(new MockActivityEnvironment().run(activities.callTool, input('vanished')));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FailureType.ToolNotConfigured, nonRetryable: true });
    expect((failure as Error).message).toContain('does not offer a tool "vanished" any more');
  });

  test('a server that is not configured (any more) fails non-retryable ToolNotConfigured', async () => {
    const failure = await rejectionOf(
      new MockActivityEnvironment().run(activities.callTool, input('echo', { text: 'x' }, { server: 'removed' })),
    );
    expect(failure).toMatchObject({ type: FailureType.ToolNotConfigured, nonRetryable: true });
  });

  test('server died mid-call, tool not read-only or idempotent: outcome_unknown, and the call is not retried', async () => {
    const result = await new MockActivityEnvironment().run(activities.callTool, input('crash'));
    expect(result.outcome).toBe('outcome_unknown');
    expect(result.content).toMatch(/^The call to test__crash may or may not have taken effect: .*connection failed/);
    expect(result.content).toContain('Check the current state');
    expect(counts().calls.crash).toBe(1);
  });

  test('server died mid-call, idempotent tool: retryable ToolTransportError (Temporal retries after reconnecting)', async () => {
    const idempotent = input('crash', {}, { annotations: { idempotentHint: true } });
    const failure = await rejectionOf(new MockActivityEnvironment().run(activities.callTool, idempotent));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FailureType.ToolTransportError, nonRetryable: false });
    expect((failure as ApplicationFailure).details).toEqual([{ server: 'test', requestSent: true }]);
    // The retry finds a fresh server.
    const retry = await new MockActivityEnvironment({ attempt: 2 }).run(
      activities.callTool,
      input('echo', { text: 'after the crash' }),
    );
    expect(retry.content).toBe('after the crash');
  });

  test('a timed-out call: outcome_unknown for a tool with side effects, retryable for a read-only tool', async () => {
    const hang = await new MockActivityEnvironment().run(activities.callTool, input('hang', {}, { timeoutMs: 300 }));
    expect(hang.outcome).toBe('outcome_unknown');
    expect(hang.content).toContain('no answer within 300 ms');

    const slow = input('slow', { delayMs: 10_000 }, { timeoutMs: 300 });
    const failure = await rejectionOf(new MockActivityEnvironment().run(activities.callTool, slow));
    expect(failure).toMatchObject({ type: FailureType.ToolTransportError, nonRetryable: false });
  });

  test('a retry of a tool with side effects runs only if the attempt before it recorded not_sent as it failed', async () => {
    // Anything else (no heartbeat: the worker died; `sent`; an older attempt's `not_sent`) may have run the tool.
    for (const heartbeatDetails of [
      undefined,
      { phase: 'connecting' },
      { phase: 'sent' },
      { phase: 'not_sent' },
      { phase: 'not_sent', attempt: 1 },
    ]) {
      const retry = new MockActivityEnvironment({ attempt: 3, heartbeatDetails });
      const result = await retry.run(activities.callTool, input('increment'));
      expect(result.outcome).toBe('outcome_unknown');
      expect(result.content).toContain('an earlier attempt of this call was interrupted and may have sent the request');
    }
    expect(counts().calls.increment).toBeUndefined();

    const retry = new MockActivityEnvironment({ attempt: 3, heartbeatDetails: { phase: 'not_sent', attempt: 2 } });
    expect(await retry.run(activities.callTool, input('increment'))).toMatchObject({ outcome: 'ok' });
    expect(counts().calls.increment).toBe(1);
  });

  test('a retry calls a read-only or idempotent tool again, whatever the earlier attempt recorded', async () => {
    for (const heartbeatDetails of [undefined, { phase: 'sent' }]) {
      const retry = new MockActivityEnvironment({ attempt: 3, heartbeatDetails });
      const result = await retry.run(activities.callTool, input('set_value', { key: 'a', value: '1' }));
      expect(result).toEqual({ outcome: 'ok', content: 'a = 1', truncated: false });
    }
  });

  test('cancelling the activity cancels the MCP request on the server and fails with CancelledFailure', async () => {
    const environment = new MockActivityEnvironment();
    const running = environment.run(activities.callTool, input('hang'));
    await waitFor(() => counts().calls.hang === 1, 10_000, 'the hang tool to start');
    environment.cancel();
    expect(await rejectionOf(running)).toBeInstanceOf(CancelledFailure);
    await waitFor(() => counts().cancellations.hang === 1, 5000, 'the cancellation to reach the server');
  });
});

describe('tool activities: failures before anything was sent', () => {
  test('a server that cannot start: listTools leaves it out and says why, without failing', async () => {
    const pool = createPool([stdioServer('broken', process.execPath, ['-e', 'process.exit(2)'])]);
    const activities = createToolActivities({ pool });
    const listing = await new MockActivityEnvironment().run(activities.listTools);
    expect(listing).toEqual({
      tools: [],
      unavailable: [{ server: 'broken', reason: expect.stringContaining('MCP server "broken": could not start') }],
    });
  });

  test('a call to a server that cannot start: retryable ToolTransportError, and the heartbeat says not_sent', async () => {
    const pool = createPool([stdioServer('broken', process.execPath, ['-e', 'process.exit(2)'])]);
    const activities = createToolActivities({ pool });
    const { environment, heartbeats } = activityEnvironment();
    const call: CallToolInput = {
      toolCallId: 'call_1',
      tool: { name: 'broken__write', server: 'broken', originalName: 'write', annotations: {}, timeoutMs: 5000 },
      arguments: {},
    };
    const failure = await rejectionOf(environment.run(activities.callTool, call));
    expect(failure).toMatchObject({ type: FailureType.ToolTransportError, nonRetryable: false });
    expect((failure as ApplicationFailure).details).toEqual([{ server: 'broken', requestSent: false }]);
    // The record of this attempt, and that it is the first of the call's attempts to fail (toolAttempts counts them).
    expect(heartbeats.at(-1)).toEqual({ phase: 'not_sent', attempt: 1, failedAttempts: 1 });
  });

  test('the call whose transport failures reach toolAttempts fails for good; lost attempts before it did not count', async () => {
    const pool = createPool([stdioServer('broken', process.execPath, ['-e', 'process.exit(2)'])]);
    const activities = createToolActivities({ pool });
    const call = (toolAttempts?: number): CallToolInput => ({
      toolCallId: 'call_1',
      tool: {
        name: 'broken__read',
        server: 'broken',
        originalName: 'read',
        annotations: { readOnlyHint: true },
        timeoutMs: 5000,
      },
      arguments: {},
      ...(toolAttempts === undefined ? {} : { toolAttempts }),
    });
    // Attempt 6 of a read-only call: attempt 1 failed and recorded it; attempts 2 to 5 were lost to dead workers,
    // their heartbeats carrying the count on.
    const { environment, heartbeats } = activityEnvironment({
      attempt: 6,
      heartbeatDetails: { phase: 'sent', failedAttempts: 1 },
    });
    const failure = await rejectionOf(environment.run(activities.callTool, call()));
    expect(failure).toMatchObject({ type: FailureType.ToolTransportError, nonRetryable: false });
    expect(heartbeats.at(-1)).toEqual({ phase: 'not_sent', attempt: 6, failedAttempts: 2 });

    const last = activityEnvironment({ attempt: 7, heartbeatDetails: heartbeats.at(-1) });
    const final = await rejectionOf(last.environment.run(activities.callTool, call()));
    expect(final).toMatchObject({ type: FailureType.ToolTransportError, nonRetryable: true });
    expect((final as ApplicationFailure).details).toEqual([{ server: 'broken', requestSent: false }]);

    const own = activityEnvironment({ attempt: 1 });
    expect(await rejectionOf(own.environment.run(activities.callTool, call(1)))).toMatchObject({ nonRetryable: true });
  });
});

describe('tool activities over Streamable HTTP (our test server, in-process)', () => {
  let server: Awaited<ReturnType<typeof startTestMcpServer>>;
  beforeEach(async () => {
    server = await startTestMcpServer({ transport: 'http', port: 0 });
  });
  afterEach(async () => {
    await server.close();
  });

  test('connection cut mid-call of a tool with side effects: outcome_unknown; a lost session is re-opened silently', async () => {
    const pool = createPool([httpServer('web', server.url)]);
    const activities = createToolActivities({ pool });
    const { tools: listed } = await new MockActivityEnvironment().run(activities.listTools);
    const tool = (name: string) => listed.find((definition) => definition.originalName === name)!;
    const call = (name: string): CallToolInput => ({ toolCallId: 'c', tool: tool(name), arguments: {} });

    const crashed = await new MockActivityEnvironment().run(activities.callTool, call('crash'));
    expect(crashed.outcome).toBe('outcome_unknown');

    const result = await new MockActivityEnvironment().run(activities.callTool, call('increment'));
    expect(result).toEqual({ outcome: 'ok', content: 'default = 1', truncated: false });
    expect(server.counters.calls).toMatchObject({ crash: 1, increment: 1 });
  });
});
