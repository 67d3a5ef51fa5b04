import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type InputRequiredResult,
} from '@modelcontextprotocol/client';
import { z } from 'zod';
import type { ToolTask } from '../../shared/tool-tasks.js';
import type { ToolQuestion, ToolQuestionAnswer } from '../../shared/types.js';
import { ELICITATION_CAPABILITY, type ElicitationAnswer, type ElicitationHandler } from './elicitation.js';
import { McpProtocolError, TaskRefusedError } from './errors.js';
import { readInputRequired } from './input-required.js';
import type { ServerConnection, Session } from './server-connection.js';
import { TASK_ANSWER_META_KEY } from './task-answer.js';

/**
 * MCP tasks of the 2026-07-28 revision: the `io.modelcontextprotocol/tasks` extension (SEP-2663). The client declares
 * the extension in a request's capabilities (`_meta`), and the server decides whether a `tools/call` becomes a task: it
 * answers with `resultType: "task"` and the task's fields instead of the call's result. `tasks/get` tells where the
 * task is, and carries its questions (`inputRequests`, while it is `input_required`) and, once it is over, its result
 * or its JSON-RPC error; `tasks/update` answers the questions (`inputResponses`); `tasks/cancel` asks it to stop.
 *
 * The SDK v2 client has none of it: its 2026-07-28 decoder refuses a `resultType` other than `complete` and
 * `input_required`. So the transport's first handler (./server-connection.ts) rewrites a task answer, before the SDK
 * reads it, into a call result that carries the task (./task-answer.ts), which the call then returns as `{ task }`;
 * the `tasks/*` requests are sent with the schemas below.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;

/** A task as a 2026-07-28 server sends it (`CreateTaskResult`, and the fields of every `tasks/get` answer). */
const ExtensionTaskSchema = z
  .object({
    taskId: z.string().min(1),
    status: z.enum(TASK_STATUSES),
    statusMessage: z.string().optional(),
    pollIntervalMs: z.number().optional(),
    ttlMs: z.number().nullable().optional(),
  })
  .passthrough();

/** `tasks/get`: the task, with its questions, its result or its error as its status says. */
const DetailedTaskSchema = ExtensionTaskSchema.extend({
  inputRequests: z.record(z.string(), z.unknown()).optional(),
  result: z
    .object({ content: z.array(z.unknown()) })
    .passthrough()
    .optional(),
  error: z.object({ code: z.number().optional(), message: z.string().optional() }).passthrough().optional(),
});

export type DetailedTask = z.infer<typeof DetailedTaskSchema>;

const AckSchema = z.object({}).passthrough();

/** `_meta` of a request that declares the extension (with the capabilities the client declares anyway). */
export function declaringTasks(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  return {
    ...meta,
    [CLIENT_CAPABILITIES_META_KEY]: { elicitation: ELICITATION_CAPABILITY, extensions: { [TASKS_EXTENSION]: {} } },
  };
}

/** True when the session speaks 2026-07-28, where tasks are the extension's. */
export function speaksExtension(session: Session): boolean {
  return session.client.getProtocolEra() === 'modern';
}

/**
 * The task a call was answered with, if it was (see ./task-answer.ts). Throws {@link McpProtocolError} when the
 * server sent a task the client did not ask for (it did not declare the extension) or one that is not a task.
 */
export function taskOfAnswer(result: CallToolResult, where: { server: string; tool: string; declared: boolean }) {
  const answer = result._meta?.[TASK_ANSWER_META_KEY];
  if (answer === undefined) return undefined;
  const refuse = (why: string) =>
    new McpProtocolError(`MCP server "${where.server}", tool "${where.tool}" ${why}`, where.server, -32603);
  if (!where.declared) {
    throw refuse(`answered with a task (resultType "task"), which this call did not declare it could take`);
  }
  const parsed = ExtensionTaskSchema.safeParse(answer);
  if (!parsed.success) throw refuse(`answered with a task that is not one: ${parsed.error.issues[0]?.message}`);
  return toToolTask(parsed.data);
}

/** `tasks/get`: the task now, with its questions, result or error. */
export async function getExtensionTask(session: Session, taskId: string, timeoutMs: number): Promise<DetailedTask> {
  return session.client.request(
    { method: 'tasks/get', params: { taskId, _meta: declaringTasks(undefined) } },
    DetailedTaskSchema,
    { timeout: timeoutMs },
  );
}

/** `tasks/cancel`: acknowledged; the task may still end otherwise. */
export async function cancelExtensionTask(session: Session, taskId: string, timeoutMs: number): Promise<void> {
  await session.client.request(
    { method: 'tasks/cancel', params: { taskId, _meta: declaringTasks(undefined) } },
    AckSchema,
    { timeout: timeoutMs },
  );
}

/**
 * The questions of a task that waits for input, for the workflow to ask (docs/mcp.md, "Tasks", "Questions"):
 * `undefined` when it asks none that a person can answer. A task that asks for sampling or roots is left to
 * `toolTaskResult`, which cancels it and says why.
 */
export function extensionTaskQuestions(task: DetailedTask): ToolQuestion[] | undefined {
  if (task.status !== 'input_required') return undefined;
  const reading = readInputRequired({ inputRequests: task.inputRequests ?? {} } as InputRequiredResult);
  return reading.kind === 'questions' && reading.questions.length > 0 ? reading.questions : undefined;
}

/**
 * `tasks/update`: the answers to the task's questions, by the server's keys. Keys are unique over the task's life, so
 * the same answers sent twice (a retried activity) name questions the server has had its answer to already.
 */
export async function updateExtensionTask(
  session: Session,
  taskId: string,
  inputResponses: Record<string, ToolQuestionAnswer | ElicitationAnswer>,
  timeoutMs: number,
): Promise<void> {
  await session.client.request(
    { method: 'tasks/update', params: { taskId, inputResponses, _meta: declaringTasks(undefined) } },
    AckSchema,
    { timeout: timeoutMs },
  );
}

/** What one look at a waiting task came to: its result, or `answered` (it goes on; poll again). */
export type ExtensionTaskPayload = { kind: 'result'; result: CallToolResult } | { kind: 'answered' };

/**
 * `tasks/get` for the workflow's `toolTaskResult`: a task that is over gives its result (a failed one its error, as an
 * error result); a task still working gives `answered`, so the workflow polls on. A task that waits for input is
 * asked about by the workflow itself (`questionsToWorkflow`: the poll brought the questions, the workflow asks them
 * durably and answers with `tasks/update` from an activity), so this look only says `answered`; for a turn recorded
 * before that (no `questionsToWorkflow`), the questions are asked here, each through `askFor(key)`, and the answers
 * sent with `tasks/update`. A question the client cannot answer (sampling, roots) cancels the task.
 */
export async function extensionTaskResult(
  server: ServerConnection,
  session: Session,
  taskId: string,
  options: {
    askFor: ((key: string) => ElicitationHandler | undefined) | undefined;
    signal: AbortSignal;
    questionsToWorkflow?: boolean;
  },
): Promise<ExtensionTaskPayload> {
  const timeoutMs = server.config.timeoutMs;
  const task = await getExtensionTask(session, taskId, timeoutMs);
  if (task.taskId !== taskId) {
    throw new TaskRefusedError(`asked for task ${taskId}, the server answered about task ${task.taskId}`);
  }
  switch (task.status) {
    case 'completed':
      if (task.result === undefined) return errorResult(`task ${taskId} completed without a result`);
      return { kind: 'result', result: task.result as CallToolResult };
    case 'failed':
      return errorResult(
        `task ${taskId} failed` +
          (task.error?.message !== undefined ? `: ${task.error.message}` : '') +
          (task.error?.code !== undefined ? ` (JSON-RPC error ${task.error.code})` : '') +
          (task.statusMessage ? ` ("${task.statusMessage}")` : ''),
      );
    case 'cancelled':
      return errorResult(
        `the server cancelled task ${taskId}` + (task.statusMessage ? ` ("${task.statusMessage}")` : ''),
      );
    case 'working':
      return { kind: 'answered' };
    case 'input_required':
      break;
  }
  const reading = readInputRequired({ inputRequests: task.inputRequests ?? {} } as InputRequiredResult);
  if (reading.kind === 'refused') {
    await cancelExtensionTask(session, taskId, timeoutMs).catch(() => undefined);
    return errorResult(`task ${taskId} could not go on: ${reading.reason}; it was cancelled`);
  }
  if (options.questionsToWorkflow === true) return { kind: 'answered' };
  const waitMs = server.config.elicitationTimeoutMs ?? 600_000;
  const answers = await Promise.all(
    reading.questions.map(async ({ key, ...question }): Promise<[string, ElicitationAnswer]> => {
      const ask = options.askFor?.(key);
      const answer = ask ? await ask(question, { waitMs, signal: options.signal }) : { action: 'cancel' as const };
      return [key, answer];
    }),
  );
  if (answers.length > 0) await updateExtensionTask(session, taskId, Object.fromEntries(answers), timeoutMs);
  return { kind: 'answered' };
}

function errorResult(text: string): ExtensionTaskPayload {
  return { kind: 'result', result: { content: [{ type: 'text', text: `Error: ${text}.` }], isError: true } };
}

export function toToolTask(task: z.infer<typeof ExtensionTaskSchema>): ToolTask {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    ...(task.pollIntervalMs !== undefined ? { pollIntervalMs: Math.round(task.pollIntervalMs) } : {}),
    ...(typeof task.ttlMs === 'number' ? { ttlMs: Math.round(task.ttlMs) } : {}),
  };
}
