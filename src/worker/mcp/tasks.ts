import { StreamableHTTPClientTransport, type CallToolResult } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { errorMessage } from '../../shared/errors.js';
import type { ToolTask } from '../../shared/tool-tasks.js';
import type { ToolQuestion, ToolQuestionAnswer } from '../../shared/types.js';
import { linkSignal } from './abort-signals.js';
import type { CallInFlight, ElicitationHandler } from './elicitation.js';
import { describeRequestFailure, McpTransportError, TaskRefusedError } from './errors.js';
import type { ServerConnection, Session } from './server-connection.js';
import {
  cancelExtensionTask,
  extensionTaskQuestions,
  extensionTaskResult,
  getExtensionTask,
  speaksExtension,
  toToolTask as fromExtensionTask,
  updateExtensionTask,
} from './task-extension.js';

export { TaskRefusedError } from './errors.js';

/**
 * MCP tasks on the client side (docs/mcp.md, "Tasks"): a tool call sent with `task` is answered with a task, and the
 * task is asked about later, by `tasks/get`, `tasks/result` and `tasks/cancel`, from whichever worker runs the
 * workflow's next activity. The SDK v2 client has the 2025-11-25 task vocabulary as wire types only ("no SDK runtime":
 * its typed `request()` does not offer the methods), so these are raw requests with the schemas below.
 *
 * A 2025-11-25 server over Streamable HTTP keeps tasks per session (server-everything does: a task store per
 * session), so the task records its session's id and every request about it goes to that session, resumed by id when
 * it is not this worker's current one. Over stdio the task lives in the server process: a worker that restarts starts
 * a new one, which does not know the task (`gone`).
 *
 * A 2026-07-28 server's tasks are those of the `io.modelcontextprotocol/tasks` extension (./task-extension.ts): the same
 * three functions speak it on such a session, so the workflow's activities are the same for both revisions.
 */

const TASK_STATUSES = ['working', 'input_required', 'completed', 'failed', 'cancelled'] as const;

/** A task as a 2025-11-25 server sends it (`CreateTaskResult.task`, the `tasks/get` result). */
const TaskSchema = z
  .object({
    taskId: z.string().min(1),
    status: z.enum(TASK_STATUSES),
    statusMessage: z.string().optional(),
    pollInterval: z.number().optional(),
    ttl: z.number().nullable().optional(),
  })
  .passthrough();

/** `tools/call` with `task`: a `CreateTaskResult`, or (a server that ignores `task`) a plain result. */
const TaskCallResultSchema = z.union([
  z.object({ task: TaskSchema }).passthrough(),
  z.object({ content: z.array(z.unknown()) }).passthrough(),
]);

/** `tasks/result` of a tool call: the call's own result. */
const TaskPayloadSchema = z.object({ content: z.array(z.unknown()) }).passthrough();

const AnyResultSchema = z.object({}).passthrough();

/** What `tools/call` with `task` got: the task (the result comes later), or a plain result. */
export type TaskCallResult = { task: ToolTask } | CallToolResult;

/** The task's id and the session it lives in. */
export type TaskRef = Pick<ToolTask, 'taskId' | 'sessionId'>;

/** Sends `tools/call` with `task` on `session` (the caller handles failures as for any call). */
export async function sendTaskCall(
  session: Session,
  params: Record<string, unknown>,
  options: { signal: AbortSignal; timeout: number },
): Promise<TaskCallResult> {
  const result = await session.client.request(
    { method: 'tools/call', params: { ...params, task: {} } },
    TaskCallResultSchema,
    options,
  );
  if ('task' in result) return { task: toToolTask(result.task as z.infer<typeof TaskSchema>, httpSessionId(session)) };
  return result as CallToolResult;
}

/** The task's state now (`tasks/get`). Throws as {@link withTaskSession} says. */
export async function getTask(server: ServerConnection, task: TaskRef, timeoutMs: number): Promise<ToolTask> {
  return (await lookAtTask(server, task, timeoutMs)).task;
}

/** A task as one `tasks/get` shows it, with the questions a 2026-07-28 task that waits for input asks. */
export interface TaskLook {
  task: ToolTask;
  /** 2026-07-28, `input_required`: the questions of `inputRequests` a person can answer (see `tasks/update`). */
  questions?: ToolQuestion[];
}

/**
 * `tasks/get`, with the task's questions when it waits for input at 2026-07-28 (a 2025-11-25 task asks while
 * `tasks/result` is open, so it has none here). Throws as {@link withTaskSession} says.
 */
export function lookAtTask(server: ServerConnection, task: TaskRef, timeoutMs: number): Promise<TaskLook> {
  return withTaskSession(server, task, async (session) => {
    let questions: ToolQuestion[] | undefined;
    let got: ToolTask;
    if (speaksExtension(session)) {
      const detailed = await getExtensionTask(session, task.taskId, timeoutMs);
      got = fromExtensionTask(detailed);
      questions = extensionTaskQuestions(detailed);
    } else {
      got = toToolTask(
        await session.client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, TaskSchema, {
          timeout: timeoutMs,
        }),
        task.sessionId,
      );
    }
    if (got.taskId !== task.taskId) {
      throw new TaskRefusedError(`asked for task ${task.taskId}, the server answered about task ${got.taskId}`);
    }
    return questions === undefined ? { task: got } : { task: got, questions };
  });
}

/**
 * Answers a 2026-07-28 task's questions (`tasks/update`, `inputResponses` by the server's keys). A 2025-11-25 session
 * has no such request (its task asks while `tasks/result` is open): refused. Throws as {@link withTaskSession} says.
 */
export async function answerTask(
  server: ServerConnection,
  task: TaskRef,
  inputResponses: Record<string, ToolQuestionAnswer>,
  timeoutMs: number,
): Promise<void> {
  await withTaskSession(server, task, async (session) => {
    if (!speaksExtension(session)) {
      throw new TaskRefusedError(
        `task ${task.taskId} is a 2025-11-25 task, whose questions are answered while tasks/result is open; ` +
          'tasks/update is a request of the 2026-07-28 tasks extension',
      );
    }
    await updateExtensionTask(session, task.taskId, inputResponses, timeoutMs);
  });
}

/** Asks the server to cancel the task (`tasks/cancel`). Throws as {@link withTaskSession} says. */
export async function cancelTask(server: ServerConnection, task: TaskRef, timeoutMs: number): Promise<void> {
  await withTaskSession<unknown>(server, task, (session) =>
    speaksExtension(session)
      ? cancelExtensionTask(session, task.taskId, timeoutMs)
      : session.client.request({ method: 'tasks/cancel', params: { taskId: task.taskId } }, AnyResultSchema, {
          timeout: timeoutMs,
        }),
  );
}

/** What `tasks/result` came to: the call's result, or `answered` (the task asked and got its answer, and goes on). */
export type TaskPayload = { kind: 'result'; result: CallToolResult } | { kind: 'answered' };

/**
 * `tasks/result`: the call's result once the task is over (2026-07-28: `tasks/get`, see
 * {@link extensionTaskResult}). A 2025-11-25 server sends the task's questions
 * (`elicitation/create` with the task's id in `_meta`) while this request is open, which is why a waiting task's
 * questions are fetched this way; they go to `onElicitation`. Once a question was answered, the request is given
 * `afterAnswerMs` more to bring the result and is then dropped (the task goes on; the workflow polls again), so the
 * activity holds no slot while the task works on. A task that brings neither a result nor a question within
 * `quietMs` is left the same way (`answered` then says only: the task goes on).
 */
export function taskResult(
  server: ServerConnection,
  task: TaskRef,
  options: {
    signal: AbortSignal;
    onElicitation: ElicitationHandler | undefined;
    /** 2026-07-28: who answers the task's question of key `key` (asked through `tasks/get`, answered by `tasks/update`). */
    askFor?: (key: string) => ElicitationHandler | undefined;
    /** 2026-07-28: the workflow asks the task's questions itself; a look at a waiting task only says `answered`. */
    questionsToWorkflow?: boolean;
    afterAnswerMs: number;
    quietMs: number;
  },
): Promise<TaskPayload> {
  return withTaskSession(server, task, async (session) => {
    if (speaksExtension(session)) {
      return extensionTaskResult(server, session, task.taskId, {
        askFor: options.askFor,
        signal: options.signal,
        questionsToWorkflow: options.questionsToWorkflow,
      });
    }
    const link = linkSignal(options.signal);
    const stop = new AbortController();
    let dropTimer: ReturnType<typeof setTimeout> | undefined = setTimeout(() => stop.abort(ANSWERED), options.quietMs);
    const call: CallInFlight = {
      taskId: task.taskId,
      async ask(request, signal) {
        clearTimeout(dropTimer);
        dropTimer = undefined;
        if (options.onElicitation === undefined) return { action: 'cancel' };
        const waitMs = server.config.elicitationTimeoutMs ?? 600_000;
        const answer = await options.onElicitation(request, { waitMs, signal });
        dropTimer ??= setTimeout(() => stop.abort(ANSWERED), options.afterAnswerMs);
        return answer;
      },
    };
    session.calls.add(call);
    try {
      const result = await session.client.request(
        { method: 'tasks/result', params: { taskId: task.taskId } },
        TaskPayloadSchema,
        { signal: AbortSignal.any([stop.signal, ...(link.signal ? [link.signal] : [])]), timeout: NO_SDK_TIMEOUT_MS },
      );
      return { kind: 'result', result: result as CallToolResult };
    } catch (error) {
      if (stop.signal.aborted && !options.signal.aborted) return { kind: 'answered' };
      throw error;
    } finally {
      clearTimeout(dropTimer);
      session.calls.delete(call);
      link.release();
    }
  });
}

const ANSWERED = new Error('the task had its answer; it goes on without this request');

/** The largest timer Node keeps (about 24 days). */
const NO_SDK_TIMEOUT_MS = 2_147_483_647;

/** JSON-RPC's "Internal error": the server failed to handle the request this time, which says nothing of the task. */
const JSON_RPC_INTERNAL_ERROR = -32603;

/**
 * Runs `request` on the session the task lives in: the current one (opened if need be), or the recorded HTTP session
 * resumed by id. A JSON-RPC error (an unknown or expired task, a missing capability) or a lost session becomes
 * {@link TaskRefusedError}; anything else, an internal error of the server's among it, a retryable
 * {@link McpTransportError}: asking about a task has no side effect, and answers or a cancel sent twice change nothing,
 * so it is asked again.
 */
async function withTaskSession<T>(
  server: ServerConnection,
  task: TaskRef,
  request: (session: Session) => Promise<T>,
): Promise<T> {
  const current = await server.open().catch((error: unknown) => {
    throw new McpTransportError(errorMessage(error), { server: server.config.name, requestSent: false, cause: error });
  });
  const resumed =
    task.sessionId !== undefined && httpSessionId(current) !== task.sessionId
      ? await server.resumeSession(task.sessionId)
      : undefined;
  const session = resumed ?? current;
  try {
    return await request(session);
  } catch (error) {
    if (error instanceof TaskRefusedError) throw error;
    const failure = describeRequestFailure(error);
    const refused = failure.kind === 'protocol' && failure.code !== JSON_RPC_INTERNAL_ERROR;
    if (refused || (resumed && failure.kind === 'session_lost')) {
      throw new TaskRefusedError(errorMessage(error).replace(/^(MCP error -?\d+: )+/, ''));
    }
    if (failure.kind === 'session_lost' || (failure.kind === 'sent' && failure.connectionBroken)) {
      server.discard(session, `a request about task ${task.taskId} failed: ${errorMessage(error)}`);
    }
    throw new McpTransportError(`MCP server "${server.config.name}", task ${task.taskId}: ${errorMessage(error)}`, {
      server: server.config.name,
      requestSent: true,
      cause: error,
    });
  } finally {
    if (resumed) await resumed.client.close().catch(() => undefined);
  }
}

function toToolTask(task: z.infer<typeof TaskSchema>, sessionId: string | undefined): ToolTask {
  return {
    taskId: task.taskId,
    status: task.status,
    ...(task.statusMessage !== undefined ? { statusMessage: task.statusMessage } : {}),
    ...(task.pollInterval !== undefined ? { pollIntervalMs: Math.round(task.pollInterval) } : {}),
    ...(typeof task.ttl === 'number' ? { ttlMs: Math.round(task.ttl) } : {}),
    ...(sessionId !== undefined ? { sessionId } : {}),
  };
}

/** The id of a 2025-11-25 Streamable HTTP session (a 2026-07-28 connection has none). */
function httpSessionId(session: Session): string | undefined {
  return session.transport instanceof StreamableHTTPClientTransport ? session.transport.sessionId : undefined;
}
