import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { errorMessage, FailureType } from '../../../shared/errors.js';
import type {
  ToolTaskAnswered,
  ToolTaskAnswerInput,
  ToolTaskInput,
  ToolTaskOutcome,
  ToolTaskPoll,
} from '../../../shared/tool-tasks.js';
import { DEFAULT_TOOL_RESULT_MAX_CHARS, toolResultToText } from '../../mcp/content.js';
import { McpTransportError } from '../../mcp/errors.js';
import type { McpPool } from '../../mcp/pool.js';
import { TaskRefusedError } from '../../mcp/tasks.js';
import { AttemptHeartbeat } from '../calls/heartbeat.js';
import { askTheConversation, type InputPoller } from './input-requests.js';

/**
 * The activities of an MCP task (docs/mcp.md, "Tasks"): each one short request about a task that a `callTool` with
 * `task` created, so no activity waits for the task itself. The workflow sleeps on a durable timer between them
 * (src/workflows/tool-tasks.ts). Asking about a task has no side effect, so each is retried like any read; a server
 * that does not know the task any more is an answer (`gone`), not a failure.
 */

export interface TaskActivityDependencies {
  /** The worker's MCP pool; without its `tasks`, every task activity fails non-retryable, saying why. */
  pool: Partial<Pick<McpPool, 'tasks'>>;
  /** As for `callTool`: the cap on a result's text. Default {@link DEFAULT_TOOL_RESULT_MAX_CHARS}. */
  maxResultChars?: number;
  /** As for `callTool`: where a task's questions go (the conversation's `requestInput` update). */
  askInput?: InputPoller;
}

/** How long `toolTaskResult` keeps `tasks/result` open after a question was answered, for a task that ends at once. */
export const AFTER_ANSWER_MS = 5_000;

export function createTaskActivities(deps: TaskActivityDependencies) {
  const maxResultChars = deps.maxResultChars ?? DEFAULT_TOOL_RESULT_MAX_CHARS;
  const tasks = () => {
    if (deps.pool.tasks !== undefined) return deps.pool.tasks;
    throw ApplicationFailure.nonRetryable(
      'This worker was given an MCP pool without task support (`tasks`); use McpPool from durable-agent/worker.',
      FailureType.ToolNotConfigured,
    );
  };
  return {
    /** One `tasks/get`: where the task is now, and (`questionsToWorkflow`) what a 2026-07-28 task asks. */
    pollToolTask: async (input: ToolTaskInput): Promise<ToolTaskPoll> => {
      try {
        if (input.questionsToWorkflow !== true)
          return { kind: 'status', task: await tasks().get(input.tool, input.task) };
        return { kind: 'status', ...(await tasks().look(input.tool, input.task)) };
      } catch (error) {
        return goneOrThrow(error, input);
      }
    },

    /**
     * `tasks/update`, the person's answers to a 2026-07-28 task's questions, which the workflow asked. Sent again (a
     * retry after a lost reply), it names the same keys, which are unique over the task's life: a server that took
     * the answers already has no question left under them (ours ignores them; the extension's servers may refuse
     * them, which reads as `gone` only if the task is unknown, else as a failure the next poll settles).
     */
    answerToolTask: async (input: ToolTaskAnswerInput): Promise<ToolTaskAnswered> => {
      try {
        await tasks().answer(input.tool, input.task, input.inputResponses);
        return { kind: 'sent' };
      } catch (error) {
        return goneOrThrow(error, input);
      }
    },

    /**
     * `tasks/result`, for a task that is over (its result) or that waits for input (a 2025-11-25 server sends its
     * questions while this request is open: they go to the person like any server's question, and once answered the
     * activity ends with `answered` unless the result follows within {@link AFTER_ANSWER_MS}). A 2026-07-28 task is
     * asked with `tasks/get`, which carries its result or its questions; the answers go back with `tasks/update`.
     */
    toolTaskResult: async (input: ToolTaskInput): Promise<ToolTaskOutcome> => {
      const context = Context.current();
      const heartbeat = AttemptHeartbeat.of(context);
      const run = input.questionsTo ?? context.info.workflowExecution;
      const onElicitation =
        deps.askInput &&
        run &&
        askTheConversation(deps.askInput, {
          target: run,
          callId: `${input.toolCallId}:task`,
          tool: input.tool,
          attempt: context.info.attempt,
          cancelled: context.cancellationSignal,
        });
      // A 2026-07-28 task's question is known by its key, unique over the task's life: the same key is the same
      // question for this activity, a retry of it and a later one, which then find its answer if it was given.
      const askFor = (key: string) =>
        deps.askInput &&
        run &&
        askTheConversation(deps.askInput, {
          target: run,
          callId: `${input.toolCallId}:task:${key}`,
          tool: input.tool,
          attempt: 1,
          cancelled: context.cancellationSignal,
        });
      try {
        const payload = await heartbeat.during(
          tasks().result(input.tool, input.task, {
            signal: context.cancellationSignal,
            onElicitation,
            askFor,
            afterAnswerMs: AFTER_ANSWER_MS,
            // A task waiting for input whose question does not come: the workflow polls on.
            quietMs: input.tool.timeoutMs,
            ...(input.questionsToWorkflow === true ? { questionsToWorkflow: true } : {}),
          }),
        );
        if (payload.kind === 'answered') return payload;
        const { text, truncated } = toolResultToText(payload.result, maxResultChars);
        return {
          kind: 'result',
          result: { outcome: payload.result.isError === true ? 'error' : 'ok', content: text, truncated },
        };
      } catch (error) {
        if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason ?? error;
        return goneOrThrow(error, input);
      }
    },

    /** `tasks/cancel`, once: the turn no longer wants the task. A server that cannot be told is reported, not retried. */
    cancelToolTask: async (input: ToolTaskInput): Promise<{ cancelled: boolean; reason?: string }> => {
      try {
        await tasks().cancel(input.tool, input.task);
        return { cancelled: true };
      } catch (error) {
        return { cancelled: false, reason: errorMessage(error) };
      }
    },
  };
}

export type TaskActivities = ReturnType<typeof createTaskActivities>;

/** The server does not know the task: an answer. Anything else: a retryable failure (asking again is harmless). */
function goneOrThrow(error: unknown, input: ToolTaskInput): { kind: 'gone'; reason: string } {
  if (error instanceof TaskRefusedError) {
    return { kind: 'gone', reason: `MCP server "${input.tool.server}" answered: ${error.message}` };
  }
  if (error instanceof ApplicationFailure) throw error;
  throw ApplicationFailure.create({
    type: FailureType.ToolTransportError,
    message: errorMessage(error),
    nonRetryable: error instanceof McpTransportError && !error.retryable,
    details: [{ server: input.tool.server, task: input.task.taskId }],
  });
}
