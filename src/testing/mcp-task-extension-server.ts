import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, ProtocolErrorCode, Server } from '@modelcontextprotocol/server';
import { TaskCallServer, TaskIdParams } from './task-server-base.js';

/**
 * The task test server's 2026-07-28 side: tasks of the `io.modelcontextprotocol/tasks` extension (SEP-2663). The
 * server decides which calls become tasks, and only for a request that declares the extension in its capabilities
 * (`_meta`); a task tool called without it is refused with -32021, as the extension says. `tasks/get` carries the
 * task's questions (`inputRequests`) and, once it is over, its result or error; `tasks/update` answers the questions;
 * `tasks/cancel` asks it to stop. The SDK v2 server has no handlers for these, so they are raw handlers with the
 * schemas below. Like the 2025-11-25 side, its tasks are done after a number of `tasks/get`, not on a clock.
 *
 * | Tool                        | Does                                                                                 |
 * | --------------------------- | ------------------------------------------------------------------------------------ |
 * | `long_job {polls?, text?}`  | done after `polls` polls (default 10); its result is `finished <text> after N polls` |
 * | `never_done`                | works for ever                                                                       |
 * | `failing_job`               | fails at its first poll with a JSON-RPC error (-32603 "the job broke")                |
 * | `plain_answer`              | answers the call with a plain result, not a task                                     |
 * | `same_id`                   | every call gets the same task id, done after 2 polls                                  |
 * | `forgetful`                 | forgets its task: every `tasks/get` answers -32602 "Task not found"                    |
 * | `expiring_job`              | keeps its task one minute (`ttlMs`); from the second poll on it has expired (-32602)  |
 * | `ask_job`                   | asks the person for a `colour` at its first poll, done at the poll after the answer  |
 * | `deaf_ask_job`              | as `ask_job`, but refuses its first five `tasks/update` (-32603 "not now")            |
 * | `broken_task`               | answers with `resultType: "task"` but no task id                                     |
 * | `unasked_task`              | answers with a task even to a call that did not declare the extension                |
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export const EXTENSION_TOOLS = [
  {
    name: 'long_job',
    description: 'A job that takes minutes.',
    inputSchema: {
      type: 'object',
      properties: { polls: { type: 'integer', minimum: 1 }, text: { type: 'string' } },
    },
  },
  ...[
    'never_done',
    'failing_job',
    'plain_answer',
    'same_id',
    'forgetful',
    'expiring_job',
    'ask_job',
    'deaf_ask_job',
    'broken_task',
    'unasked_task',
  ].map((name) => ({
    name,
    description: `Task test tool ${name}.`,
    inputSchema: { type: 'object', properties: {} },
  })),
];

/** What this side counts (the task test server's counters, ./mcp-task-server.ts, have these and more). */
export interface ExtensionServerCounters {
  calls: Array<{ tool: string; task: boolean; revision?: '2026-07-28' }>;
  polls: Map<string, number>;
  cancelled: string[];
  updates: Array<{ taskId: string; inputResponses: Record<string, unknown> }>;
}

interface ExtensionTask {
  tool: string;
  polls: number;
  donePolls: number;
  text: string;
  status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  createdAt: string;
  ttlMs: number | null;
  /** `ask_job`: the answer given by `tasks/update`, once there is one. */
  answer?: { action: string; content?: Record<string, unknown> };
  /** `deaf_ask_job`: the `tasks/update`s it refused so far. */
  refusedUpdates?: number;
}

/** How many `tasks/update`s `deaf_ask_job` refuses before it takes one. */
export const DEAF_UPDATES = 5;

const COLOUR_QUESTION = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Which colour should the job paint?',
    requestedSchema: { type: 'object', properties: { colour: { type: 'string' } }, required: ['colour'] },
  },
};

/** The request's context as the SDK gives it: the `_meta` envelope and the answers, lifted out of the params. */
interface RequestContext {
  mcpReq: { envelope?: Record<string, unknown>; inputResponses?: Record<string, unknown> };
}

/** Whether the request declares the extension in its capabilities (the envelope the SDK lifts out of `_meta`). */
function declaresExtension(ctx: RequestContext): boolean {
  const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

function taskFields(id: string, task: ExtensionTask, pollIntervalMs: number) {
  return {
    taskId: id,
    status: task.status,
    statusMessage: `${task.polls} of ${task.donePolls} polls`,
    createdAt: task.createdAt,
    lastUpdatedAt: new Date().toISOString(),
    ttlMs: task.ttlMs,
    pollIntervalMs,
  };
}

/** The task as `tasks/get` shows it: with its questions, its result or its error. */
function detailed(id: string, task: ExtensionTask, pollIntervalMs: number) {
  const fields = taskFields(id, task, pollIntervalMs);
  if (task.status === 'input_required') return { ...fields, inputRequests: { colour: COLOUR_QUESTION } };
  if (task.status === 'failed') return { ...fields, error: { code: -32603, message: 'the job broke' } };
  if (task.status !== 'completed') return fields;
  const answer = task.answer;
  const colour = answer?.content?.colour;
  const text =
    answer === undefined
      ? `finished ${task.text} after ${task.polls} polls`
      : `painted ${typeof colour === 'string' ? colour : `nothing (${answer.action})`}`;
  return { ...fields, result: { content: [{ type: 'text', text }], isError: false } };
}

/** One poll: a task not over yet moves on. */
function advance(task: ExtensionTask): void {
  if (task.status === 'completed' || task.status === 'failed' || task.status === 'cancelled') return;
  task.polls++;
  if (task.status !== 'working' || task.tool === 'never_done') return;
  if (task.tool === 'ask_job' || task.tool === 'deaf_ask_job') {
    task.status = task.answer === undefined ? 'input_required' : 'completed';
    return;
  }
  if (task.polls >= task.donePolls) task.status = task.tool === 'failing_job' ? 'failed' : 'completed';
}

/** A server instance of the 2026-07-28 side; over HTTP one per request, all sharing `tasks` and `counters`. */
export function createExtensionTaskServer(
  counters: ExtensionServerCounters,
  tasks: Map<string, ExtensionTask>,
  pollIntervalMs: number,
): Server {
  const server = new TaskCallServer(
    { name: 'durable-agent-task-test-server', version: '1.0.0' },
    { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } } },
  );
  server.setRequestHandler('tools/list', () => ({ tools: EXTENSION_TOOLS as never }));
  server.setRequestHandler('tools/call', (request, ctx) => {
    const { name, arguments: args = {} } = request.params;
    const declared = declaresExtension(ctx);
    counters.calls.push({ tool: name, task: declared, revision: '2026-07-28' });
    if (name === 'plain_answer') return { content: [{ type: 'text', text: `${name}: a plain result` }] };
    if (name === 'broken_task') return { resultType: 'task', status: 'working' } as never;
    if (!declared && name !== 'unasked_task') {
      throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    }
    const id = name === 'same_id' ? 'the-only-task' : `task-${counters.calls.length}-${name}`;
    const task: ExtensionTask = {
      tool: name,
      polls: 0,
      donePolls: name === 'long_job' ? Number(args.polls ?? 10) : name === 'same_id' ? 2 : 1,
      text: typeof args.text === 'string' ? args.text : name,
      status: 'working',
      createdAt: new Date().toISOString(),
      ttlMs: name === 'expiring_job' ? 60_000 : 24 * 60 * 60 * 1000,
    };
    if (!tasks.has(id)) tasks.set(id, task);
    return { resultType: 'task', ...taskFields(id, tasks.get(id)!, pollIntervalMs) } as never;
  });
  const known = (taskId: string, ctx: RequestContext): ExtensionTask => {
    if (!declaresExtension(ctx)) {
      throw new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability');
    }
    const task = tasks.get(taskId);
    if (task === undefined || task.tool === 'forgetful') {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
    }
    if (task.tool === 'expiring_job' && task.polls >= 1) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task has expired');
    }
    return task;
  };
  server.setRequestHandler('tasks/get', { params: TaskIdParams }, ({ taskId }, ctx) => {
    counters.polls.set(taskId, (counters.polls.get(taskId) ?? 0) + 1);
    const task = known(taskId, ctx);
    advance(task);
    return detailed(taskId, task, pollIntervalMs);
  });
  // `inputResponses` is a field the SDK lifts out of every request's params (multi round-trip requests) into the context.
  server.setRequestHandler('tasks/update', { params: TaskIdParams }, ({ taskId }, ctx) => {
    const inputResponses = ctx.mcpReq.inputResponses ?? {};
    counters.updates.push({ taskId, inputResponses });
    const task = known(taskId, ctx);
    if (task.tool === 'deaf_ask_job' && (task.refusedUpdates ?? 0) < DEAF_UPDATES) {
      task.refusedUpdates = (task.refusedUpdates ?? 0) + 1;
      throw new ProtocolError(ProtocolErrorCode.InternalError, 'not now');
    }
    const answer = inputResponses.colour as ExtensionTask['answer'];
    if (task.status === 'input_required' && answer !== undefined) {
      task.answer = answer;
      task.status = 'working';
    }
    return {};
  });
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, ({ taskId }, ctx) => {
    counters.cancelled.push(taskId);
    const task = known(taskId, ctx);
    if (task.status === 'working' || task.status === 'input_required') task.status = 'cancelled';
    return {};
  });
  return server;
}

export type { ExtensionTask };
