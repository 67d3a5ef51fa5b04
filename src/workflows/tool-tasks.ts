import { ActivityFailure } from '@temporalio/common';
import { CancellationScope, condition, isCancellation, patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import { errorMessage } from '../shared/errors.js';
import type { ToolTask, ToolTaskInput, ToolTaskOutcome, ToolTaskPoll } from '../shared/tool-tasks.js';
import type { CallToolResult, ToolCall, ToolDefinition, ToolMessage, ToolQuestion } from '../shared/types.js';
import { DEFAULT_MAX_TASK_WAIT_MS } from './budget.js';
import { calledTool, SYNTHETIC_RESULTS, toolMessage } from './tool-calls.js';
import type { TimeLimit } from './turn-approvals.js';
import { answerTaskQuestions, TASK_QUESTIONS_PATCH } from './task-questions.js';
import { report, type TurnState } from './turn-state.js';
import { waitEnded, waitStarted } from './wait-metrics.js';

/**
 * A tool call answered with an MCP task (docs/mcp.md, "Tasks"), awaited durably. The `callTool` activity that created
 * the task returned its id, so the id is in history before anything waits. The turn then sleeps on a durable timer
 * and asks about the task with short `pollToolTask` activities, and fetches the result with `toolTaskResult` once the
 * task is over: no activity waits for the task and no worker holds it, so it survives workers that die, deploys and
 * Temporal outages (a timer fires late, a poll is retried). The wait counts against its own limit, `maxTaskWaitMs`,
 * not the turn's time limit, which is paused meanwhile as for a person's answer.
 *
 * Only tools recorded with `task` (servers that declare `execution.taskSupport`) take this path, and the turn takes it
 * behind `patched('mcp-tool-tasks')`: no history recorded before has such a tool.
 *
 * Every Date.now() here (when the wait began, how long it has waited) reads Temporal's workflow time, which the
 * workflow sandbox puts in place of the clock: deterministic on replay, and skipped forward by the time-skipping test
 * server, so a task of hours is waited for in a test in seconds.
 */

const { pollToolTask, cancelToolTask } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Asking about a task has no side effect: retried, but not for ever (a server down that long is one more poll).
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

const { toolTaskResult } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // It heartbeats while it waits for the result or for a person's answer to the task's question.
  heartbeatTimeout: '6 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** The shortest and longest time between two polls, whatever the server suggests. */
export const MIN_POLL_INTERVAL_MS = 1_000;
export const MAX_POLL_INTERVAL_MS = 5 * 60 * 1000;
/** Between two polls when the server suggests nothing. */
export const DEFAULT_POLL_INTERVAL_MS = 5_000;

/**
 * How long to sleep before the next poll: the server's `pollInterval` within the bounds above, and never more often
 * than every twentieth of the time waited so far, so a task that takes hours costs tens of polls, not thousands (each
 * is a timer and an activity in history). Never past the end of the wait.
 */
export function nextPollDelay(suggestedMs: number | undefined, waitedMs: number, leftMs: number): number {
  const bounded = Math.min(
    MAX_POLL_INTERVAL_MS,
    Math.max(MIN_POLL_INTERVAL_MS, suggestedMs ?? DEFAULT_POLL_INTERVAL_MS),
  );
  const spaced = Math.max(bounded, Math.min(MAX_POLL_INTERVAL_MS, Math.floor(waitedMs / 20)));
  return Math.max(0, Math.min(spaced, leftMs));
}

/** What the status and the Web UI show of a call waiting for its task. */
export function taskWaitText(name: string, taskId: string, polls: number, status: string): string {
  return `waiting for task ${taskId} of ${name} (${polls} poll${polls === 1 ? '' : 's'}, last status ${status})`;
}

/** Wait for the task `created` of `call`: its result, or a tool message saying why there is none. */
export async function awaitToolTask(
  turn: TurnState,
  limit: TimeLimit,
  { call, tool }: { call: ToolCall; tool: ToolDefinition },
  created: ToolTask,
): Promise<CallToolResult | ToolMessage> {
  const tasks = (turn.toolTasks ??= new Map<string, string>());
  const key = `${tool.server}\u0000${created.taskId}`;
  const owner = tasks.get(key);
  // A misbehaving server gave the id of a task already awaited: polling it would report another call's task.
  if (owner !== undefined) return TASK_RESULTS.reused(call, tool, created.taskId, owner);
  tasks.set(key, call.id);
  const input: ToolTaskInput = {
    toolCallId: call.id,
    tool: calledTool(tool),
    task: { taskId: created.taskId, ...(created.sessionId !== undefined ? { sessionId: created.sessionId } : {}) },
    ...(turn.context.questionsTo ? { questionsTo: turn.context.questionsTo } : {}),
    questionsToWorkflow: true,
  };
  const requestedAt = new Date(Date.now()).toISOString();
  limit.pause();
  waitStarted('task', call.id, {
    'gen_ai.tool.call.id': call.id,
    'gen_ai.tool.name': tool.name,
    'durable_agent.task.id': created.taskId,
  });
  let outcome = 'cancelled';
  try {
    const result = await pollUntilOver(turn, call, input, created);
    outcome = 'role' in result ? result.outcome : 'completed';
    return result;
  } catch (error) {
    if (!isCancellation(error)) throw error;
    // The turn was interrupted (or the conversation ended): the server is told the task is no longer wanted.
    await CancellationScope.nonCancellable(() => cancelToolTask(input).catch(() => undefined));
    return limit.timedOut
      ? SYNTHETIC_RESULTS.timeBudgetCancelled(call)
      : TASK_RESULTS.interrupted(call, created.taskId);
  } finally {
    limit.resume();
    waitEnded('task', call.id, requestedAt, outcome);
  }
}

async function pollUntilOver(
  turn: TurnState,
  call: ToolCall,
  input: ToolTaskInput,
  created: ToolTask,
): Promise<CallToolResult | ToolMessage> {
  const maxWaitMs = turn.budget.maxTaskWaitMs ?? DEFAULT_MAX_TASK_WAIT_MS;
  const startedAt = Date.now();
  let task = created;
  let status: string = task.status;
  let polls = 0;
  // A 2026-07-28 task's questions, which the last poll brought: asked in the workflow (./task-questions.ts).
  let questions: ToolQuestion[] | undefined;
  for (;;) {
    if (task.status === 'cancelled') return TASK_RESULTS.cancelledByServer(call, task);
    if (questions !== undefined) {
      report(turn, taskWaitText(call.name, task.taskId, polls, status));
      const left = maxWaitMs - (Date.now() - startedAt);
      const asked = await answerTaskQuestions(turn.context, { call, input, polls }, questions, left);
      if (asked.kind === 'gone') return TASK_RESULTS.gone(call, task, asked.reason);
      if (asked.kind === 'timeout' || asked.kind === 'ended' || asked.kind === 'interrupted') {
        await CancellationScope.nonCancellable(() => cancelToolTask(input).catch(() => undefined));
        if (asked.kind === 'timeout') return TASK_RESULTS.unanswered(call, task, maxWaitMs);
        return asked.kind === 'ended'
          ? TASK_RESULTS.ended(call, task.taskId)
          : TASK_RESULTS.interrupted(call, task.taskId);
      }
      if (asked.kind === 'unsent') status = `input_required (answers not sent yet: ${asked.reason})`;
    } else if (task.status !== 'working') {
      // Over (its result), or waiting for input (a 2025-11-25 server sends the question while `tasks/result` is open).
      const fetched = await fetchResult(turn, call, input, polls);
      if (fetched.kind === 'result') return task.status === 'failed' ? asError(fetched.result) : fetched.result;
      if (fetched.kind === 'failed' || (fetched.kind === 'gone' && task.status === 'failed')) {
        return TASK_RESULTS.noResult(call, task, fetched.reason);
      }
      if (fetched.kind === 'gone') return TASK_RESULTS.gone(call, task, fetched.reason);
    }
    const waited = Date.now() - startedAt;
    if (waited >= maxWaitMs) {
      await cancelToolTask(input).catch(() => undefined);
      return TASK_RESULTS.tooLong(call, task, maxWaitMs);
    }
    report(turn, taskWaitText(call.name, task.taskId, polls, status));
    // A timer, which `end` cuts short: a conversation that closes after this turn no longer needs the task.
    const ending = () => turn.context.observer.ending?.() === true;
    if (await condition(ending, nextPollDelay(task.pollIntervalMs, waited, maxWaitMs - waited))) {
      await cancelToolTask(input).catch(() => undefined);
      return TASK_RESULTS.ended(call, task.taskId);
    }
    polls++;
    const poll = await pollOnce(turn, call, input, polls);
    questions = undefined;
    if (poll.kind === 'gone') return TASK_RESULTS.gone(call, task, poll.reason);
    if (poll.kind === 'unreachable') {
      status = `unknown: ${poll.reason}`;
      continue;
    }
    // The session is the one the task was created in, whatever the server says.
    task = { ...poll.task, ...(created.sessionId !== undefined ? { sessionId: created.sessionId } : {}) };
    status = task.status;
    if (task.taskId !== created.taskId)
      return TASK_RESULTS.gone(call, created, `it answered about task ${task.taskId}`);
    // Only a poll that brought questions asks for the patch, so every other history replays as it was recorded.
    if (task.status === 'input_required' && poll.questions !== undefined && patched(TASK_QUESTIONS_PATCH)) {
      questions = poll.questions;
    }
  }
}

/** A failed task's result is an error for the model, whatever the server put in it. */
function asError(result: CallToolResult): CallToolResult {
  return result.outcome === 'ok' ? { ...result, outcome: 'error' } : result;
}

type Poll = ToolTaskPoll | { kind: 'unreachable'; reason: string };

/** One poll; a server that could not be asked (after the activity's retries) is one more poll, not the end. */
async function pollOnce(turn: TurnState, call: ToolCall, input: ToolTaskInput, polls: number): Promise<Poll> {
  try {
    return await pollToolTask.executeWithOptions(
      { summary: `turn ${turn.context.turn} · task of ${call.name} · poll ${polls}` },
      [input],
    );
  } catch (error) {
    if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
    return { kind: 'unreachable', reason: errorMessage(error.cause ?? error) };
  }
}

async function fetchResult(
  turn: TurnState,
  call: ToolCall,
  input: ToolTaskInput,
  polls: number,
): Promise<ToolTaskOutcome | { kind: 'failed'; reason: string }> {
  const tool = turn.tools.get(call.name);
  try {
    return await toolTaskResult.executeWithOptions(
      {
        summary: `turn ${turn.context.turn} · task of ${call.name} · result after ${polls} polls`,
        // The person may take the server's `elicitationTimeoutMs` to answer the task's question.
        startToCloseTimeout: input.tool.timeoutMs + (tool?.elicitationTimeoutMs ?? 0) + 10_000,
      },
      [input],
    );
  } catch (error) {
    if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
    return { kind: 'failed', reason: errorMessage(error.cause ?? error) };
  }
}

/** A task that ended without a result for the model: it reads why. */
export const TASK_RESULTS = {
  reused: (call: ToolCall, tool: ToolDefinition, taskId: string, owner: string) =>
    toolMessage(
      call,
      'error',
      `Error: MCP server "${tool.server}" answered this call to ${call.name} with task ${taskId}, the id of a task it ` +
        `had already given call ${owner}; a server must give each task its own id, so this call has no result. It was ` +
        'not sent again: it may or may not have taken effect.',
    ),
  gone: (call: ToolCall, task: ToolTask, reason: string) =>
    toolMessage(
      call,
      'error',
      `Error: the call to ${call.name} became task ${task.taskId}, which its server no longer knows (${reason})` +
        (task.ttlMs !== undefined ? `; the server keeps a task ${task.ttlMs} ms, so it may have expired` : '') +
        '. There is no result, and it was not sent again: it may or may not have taken effect.',
    ),
  noResult: (call: ToolCall, task: ToolTask, reason: string) =>
    toolMessage(
      call,
      'error',
      `Error: task ${task.taskId} of ${call.name} ended ${task.status}` +
        (task.statusMessage ? ` ("${task.statusMessage}")` : '') +
        `, and its result could not be fetched: ${reason}.`,
    ),
  cancelledByServer: (call: ToolCall, task: ToolTask) =>
    toolMessage(
      call,
      'error',
      `Error: the server cancelled task ${task.taskId} of ${call.name}` +
        (task.statusMessage ? ` ("${task.statusMessage}")` : '') +
        '; there is no result.',
    ),
  tooLong: (call: ToolCall, task: ToolTask, maxWaitMs: number) =>
    toolMessage(
      call,
      'budget_exhausted',
      `Error: task ${task.taskId} of ${call.name} was still ${task.status} after ${Math.round(maxWaitMs / 1000)} s, ` +
        "the longest a call may wait for its task (the conversation's maxTaskWaitMs); it was cancelled and has no " +
        'result. It may have taken part of its effect.',
    ),
  unanswered: (call: ToolCall, task: ToolTask, maxWaitMs: number) =>
    toolMessage(
      call,
      'budget_exhausted',
      `Error: task ${task.taskId} of ${call.name} asked the person a question that had no answer within ` +
        `${Math.round(maxWaitMs / 1000)} s of the task's start, the longest a call may wait for its task (the ` +
        "conversation's maxTaskWaitMs); the question was withdrawn and the task cancelled, so there is no result. It " +
        'may have taken part of its effect.',
    ),
  ended: (call: ToolCall, taskId: string) =>
    toolMessage(
      call,
      'cancelled',
      `The conversation was ended while this call waited for its task ${taskId}; the task was cancelled and there ` +
        'is no result.',
    ),
  interrupted: (call: ToolCall, taskId: string) =>
    toolMessage(
      call,
      'cancelled',
      `The user interrupted the turn while this call waited for its task ${taskId}; the task was cancelled and there ` +
        'is no result.',
    ),
} as const;
