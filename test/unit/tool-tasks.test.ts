import { describe, expect, it } from 'vitest';
import { parseMcpConfig } from '../../src/worker/mcp/config.js';
import { toToolDefinitions } from '../../src/worker/mcp/tool-definitions.js';
import {
  DEFAULT_POLL_INTERVAL_MS,
  MAX_POLL_INTERVAL_MS,
  MIN_POLL_INTERVAL_MS,
  nextPollDelay,
  taskWaitText,
} from '../../src/workflows/tool-tasks.js';

/** The pure rules of MCP task calls (docs/mcp.md, "Tasks"); the waits themselves: test/workflows/tool-tasks.test.ts. */

describe('nextPollDelay: the server’s pollInterval, within bounds, spaced out as the wait grows', () => {
  it('honours the server’s suggestion between the bounds', () => {
    expect(nextPollDelay(3_000, 0, Infinity)).toBe(3_000);
    expect(nextPollDelay(undefined, 0, Infinity)).toBe(DEFAULT_POLL_INTERVAL_MS);
    expect(nextPollDelay(10, 0, Infinity)).toBe(MIN_POLL_INTERVAL_MS);
    expect(nextPollDelay(24 * 60 * 60 * 1000, 0, Infinity)).toBe(MAX_POLL_INTERVAL_MS);
  });

  it('never polls more often than every twentieth of the time waited, up to the longest interval', () => {
    expect(nextPollDelay(1_000, 10 * 60_000, Infinity)).toBe(30_000);
    expect(nextPollDelay(1_000, 10 * 60 * 60_000, Infinity)).toBe(MAX_POLL_INTERVAL_MS);
  });

  it('never sleeps past the end of the wait', () => {
    expect(nextPollDelay(30_000, 0, 5_000)).toBe(5_000);
    expect(nextPollDelay(30_000, 0, -1)).toBe(0);
  });

  it('a task of six hours at a server’s one second costs tens of polls, not thousands', () => {
    let waited = 0;
    let polls = 0;
    while (waited < 6 * 60 * 60 * 1000) {
      waited += nextPollDelay(1_000, waited, Infinity);
      polls++;
    }
    expect(polls).toBeLessThan(250);
  });
});

describe('what status shows of a call waiting for its task', () => {
  it('names the task, the tool, the polls and the last status', () => {
    expect(taskWaitText('everything__simulate-research-query', 'abc', 3, 'working')).toBe(
      'waiting for task abc of everything__simulate-research-query (3 polls, last status working)',
    );
    expect(taskWaitText('t', 'x', 1, 'input_required')).toBe(
      'waiting for task x of t (1 poll, last status input_required)',
    );
  });
});

describe('which tools are called as tasks', () => {
  const config = (extra: Record<string, unknown> = {}) =>
    parseMcpConfig(JSON.stringify({ mcpServers: { jobs: { command: 'jobs', ...extra } } }), 'mcp.json', {}).servers[0]!;
  const tools = [
    { name: 'required', inputSchema: { type: 'object' as const }, execution: { taskSupport: 'required' as const } },
    { name: 'optional', inputSchema: { type: 'object' as const }, execution: { taskSupport: 'optional' as const } },
    { name: 'forbidden', inputSchema: { type: 'object' as const }, execution: { taskSupport: 'forbidden' as const } },
    { name: 'plain', inputSchema: { type: 'object' as const } },
  ];

  it('required always; optional only with the server’s optionalTasks; no field on the others', () => {
    const plain = toToolDefinitions([{ config: config(), tools }]);
    expect(plain.map((tool) => tool.task)).toEqual(['required', undefined, undefined, undefined]);
    expect(plain.slice(1).every((tool) => !('task' in tool))).toBe(true);
    const optional = toToolDefinitions([{ config: config({ optionalTasks: true }), tools }]);
    expect(optional.map((tool) => tool.task)).toEqual(['required', 'optional', undefined, undefined]);
  });

  it('optionalTasks that is not a boolean is an error naming the server and the key', () => {
    expect(() => config({ optionalTasks: 'yes' })).toThrow(/server "jobs" key "optionalTasks"/);
  });
});
