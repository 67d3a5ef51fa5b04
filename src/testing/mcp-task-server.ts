import { ProtocolError, ProtocolErrorCode, Server, type ServerOptions } from '@modelcontextprotocol/server';
import { TaskCallServer, TaskIdParams } from './task-server-base.js';
import { serveMcpOverHttp, type ServedMcp } from './mcp-http.js';
import { createExtensionTaskServer, type ExtensionTask } from './mcp-task-extension-server.js';

/**
 * An MCP test server whose tools run as tasks (2025-11-25, SEP-1686), over Streamable HTTP in sessions, in-process:
 * for tests of durable task calls (docs/mcp.md, "Tasks") that need tasks the published servers do not have: one that
 * takes minutes of workflow time, and servers that misbehave. Its tasks do not run on a clock: a task is done after a
 * number of `tasks/get`, each of which suggests the next one in `pollIntervalMs` (30 s), so on the time-skipping test
 * server a task of 10 polls takes five minutes of workflow time and a fraction of a second of real time. Started with
 * `extension: true`, it also speaks 2026-07-28 to clients that choose it, with the `io.modelcontextprotocol/tasks`
 * extension's tasks (./mcp-task-extension-server.ts: the same tools but `optional_job`, and `expiring_job`, `ask_job`).
 *
 * | Tool                  | Task support | Does                                                                     |
 * | --------------------- | ------------ | ------------------------------------------------------------------------ |
 * | `long_job {polls?, text?}` | required | done after `polls` polls (default 10); its result is `finished <text>`   |
 * | `never_done`          | required     | works for ever                                                           |
 * | `failing_job`         | required     | fails at its first poll; its result is an error                          |
 * | `plain_answer`        | required     | answers the call with a plain result, not a task                         |
 * | `same_id`             | required     | every call gets the same task id, done after 2 polls                     |
 * | `forgetful`           | required     | forgets its task: every `tasks/get` answers -32602 "Task not found"      |
 * | `optional_job`        | optional     | as `long_job` with 1 poll, or a plain result when called without `task`  |
 */

/** What the test server counts, for tests to assert on. */
export interface TaskServerCounters {
  /**
   * `tools/call` requests, by tool: with `task` or without (2025-11-25), or declaring the tasks extension or not
   * (2026-07-28, `revision` set).
   */
  calls: Array<{ tool: string; task: boolean; revision?: '2026-07-28' }>;
  /** `tasks/get` requests, by task id. */
  polls: Map<string, number>;
  /** Task ids `tasks/cancel` was sent for, in order. */
  cancelled: string[];
  /** Task ids `tasks/result` was sent for, in order. */
  results: string[];
  /** `tasks/update` requests (2026-07-28), in order. */
  updates: Array<{ taskId: string; inputResponses: Record<string, unknown> }>;
}

export interface RunningTaskServer {
  url: string;
  counters: TaskServerCounters;
  /** Forget every session (as a restarted server would), and with them their tasks. */
  forgetSessions(): Promise<void>;
  close(): Promise<void>;
}

/** Suggested between two polls. */
export const TASK_SERVER_POLL_INTERVAL_MS = 30_000;

const TOOLS = [
  {
    name: 'long_job',
    description: 'A job that takes minutes.',
    inputSchema: {
      type: 'object',
      properties: { polls: { type: 'integer', minimum: 1 }, text: { type: 'string' } },
    },
    execution: { taskSupport: 'required' },
  },
  ...['never_done', 'failing_job', 'plain_answer', 'same_id', 'forgetful'].map((name) => ({
    name,
    description: `Task test tool ${name}.`,
    inputSchema: { type: 'object', properties: {} },
    execution: { taskSupport: 'required' },
  })),
  {
    name: 'optional_job',
    description: 'A job that may run as a task.',
    inputSchema: { type: 'object', properties: {} },
    execution: { taskSupport: 'optional' },
  },
] as const;

interface TaskState {
  tool: string;
  polls: number;
  donePolls: number;
  text: string;
  status: 'working' | 'completed' | 'failed' | 'cancelled';
  createdAt: string;
}

function taskFields(id: string, task: TaskState, pollIntervalMs: number) {
  return {
    taskId: id,
    status: task.status,
    createdAt: task.createdAt,
    lastUpdatedAt: new Date().toISOString(),
    ttl: 24 * 60 * 60 * 1000,
    pollInterval: pollIntervalMs,
    statusMessage: `${task.polls} of ${task.donePolls} polls`,
  };
}

function createServer(counters: TaskServerCounters, tasks: Map<string, TaskState>, pollIntervalMs: number): Server {
  const options: ServerOptions = {
    capabilities: { tools: {}, tasks: { cancel: {}, requests: { tools: { call: {} } } } },
  };
  const server = new TaskCallServer({ name: 'durable-agent-task-test-server', version: '1.0.0' }, options);
  server.setRequestHandler('tools/list', () => ({ tools: TOOLS.map((tool) => ({ ...tool }) as never) }));
  server.setRequestHandler('tools/call', (request) => {
    const { name, arguments: args = {} } = request.params;
    const asTask = (request.params as { task?: unknown }).task !== undefined;
    counters.calls.push({ tool: name, task: asTask });
    if (name === 'plain_answer' || (name === 'optional_job' && !asTask)) {
      return { content: [{ type: 'text', text: `${name}: a plain result` }] };
    }
    const id = name === 'same_id' ? 'the-only-task' : `task-${counters.calls.length}-${name}`;
    const donePolls = name === 'long_job' ? Number(args.polls ?? 10) : name === 'same_id' ? 2 : 1;
    const text = typeof args.text === 'string' ? args.text : name;
    const task: TaskState = {
      tool: name,
      polls: 0,
      donePolls,
      text,
      status: 'working',
      createdAt: new Date().toISOString(),
    };
    if (!tasks.has(id)) tasks.set(id, task);
    return { task: taskFields(id, tasks.get(id)!, pollIntervalMs) } as never;
  });
  const known = (taskId: string): TaskState => {
    const task = tasks.get(taskId);
    if (task === undefined || task.tool === 'forgetful') {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    }
    return task;
  };
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, ({ taskId }) => {
    counters.polls.set(taskId, (counters.polls.get(taskId) ?? 0) + 1);
    const task = known(taskId);
    task.polls++;
    if (task.status === 'working' && task.tool !== 'never_done' && task.polls >= task.donePolls) {
      task.status = task.tool === 'failing_job' ? 'failed' : 'completed';
    }
    return taskFields(taskId, task, pollIntervalMs);
  });
  server.setRequestHandler('tasks/result', { params: TaskIdParams }, ({ taskId }) => {
    counters.results.push(taskId);
    const task = known(taskId);
    if (task.status === 'failed') return { content: [{ type: 'text', text: 'it broke' }], isError: true };
    return { content: [{ type: 'text', text: `finished ${task.text} after ${task.polls} polls` }] };
  });
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, ({ taskId }) => {
    counters.cancelled.push(taskId);
    const task = known(taskId);
    if (task.status === 'working') task.status = 'cancelled';
    return taskFields(taskId, task, pollIntervalMs);
  });
  return server;
}

export interface TaskServerOptions {
  /** What its tasks suggest between polls; default {@link TASK_SERVER_POLL_INTERVAL_MS}. */
  pollIntervalMs?: number;
  /**
   * Also speak 2026-07-28, with the `io.modelcontextprotocol/tasks` extension (./mcp-task-extension-server.ts), to
   * clients that choose it; 2025-11-25 clients get sessions as before. Default false: 2025-11-25 sessions only.
   */
  extension?: boolean;
}

/** Serve the task test server over Streamable HTTP on a free port of 127.0.0.1. */
export async function startTaskMcpServer(options: TaskServerOptions = {}): Promise<RunningTaskServer> {
  const pollIntervalMs = options.pollIntervalMs ?? TASK_SERVER_POLL_INTERVAL_MS;
  const counters: TaskServerCounters = { calls: [], polls: new Map(), cancelled: [], results: [], updates: [] };
  // 2026-07-28 has no sessions: one server instance per request, and the tasks are the server's.
  const extensionTasks = new Map<string, ExtensionTask>();
  // Tasks per session, as server-everything keeps them: a forgotten session's tasks are gone.
  const served: ServedMcp = await serveMcpOverHttp(
    ({ era }) =>
      era === 'modern'
        ? createExtensionTaskServer(counters, extensionTasks, pollIntervalMs)
        : createServer(counters, new Map(), pollIntervalMs),
    { legacyOnly: options.extension !== true },
  );
  return { url: served.url, counters, forgetSessions: served.forgetSessions, close: served.close };
}
