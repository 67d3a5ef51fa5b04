import { ActivityFailure } from '@temporalio/common';
import { condition, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import { errorMessage } from '../shared/errors.js';
import type { ToolTaskInput } from '../shared/tool-tasks.js';
import type { ToolCall, ToolQuestion, ToolQuestionAnswer } from '../shared/types.js';
import type { TurnContext } from './turn-context.js';

/**
 * A 2026-07-28 task's questions as durable waits (docs/mcp.md, "Tasks", "Questions"). The poll that finds the task
 * `input_required` brings its questions (`inputRequests`); the turn records them as the conversation's pending inputs,
 * as it does a plain `input_required` answer's (./tool-questions.ts), and waits for the person with `condition()`: no
 * activity is open, so a worker that dies meanwhile loses nothing, and the next one rebuilds the wait from history.
 * The answers go to the server with `tasks/update` from the short `answerToolTask` activity, and the turn polls on.
 *
 * The wait has no bound of its own, as a plain `input_required` question has none: it lasts as long as the call may
 * wait for its task (`maxTaskWaitMs`), which keeps counting, since the task is still the call's task. Asking this way
 * changes the commands a turn emits, so it is behind `patched(TASK_QUESTIONS_PATCH)`, asked only when a poll brought
 * questions: a turn recorded before (whose polls brought none, and whose `toolTaskResult` asked) replays as it ran.
 */

export const TASK_QUESTIONS_PATCH = 'task-questions-in-workflow';

const { answerToolTask } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  // Sent twice, the answers name the same keys, unique over the task's life: a server that took them has no question
  // left under them. Retried, but not for ever: answers that could not be sent are sent again after the next poll.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** How a round of a task's questions came out: the answers went to the server (or will after the next poll), or not. */
export type TaskQuestionsOutcome =
  | { kind: 'sent' }
  | { kind: 'unsent'; reason: string }
  | { kind: 'gone'; reason: string }
  | { kind: 'timeout' }
  | { kind: 'ended' }
  | { kind: 'interrupted' };

/** The request id of a task's question: the call, the turn, and the server's key (unique over the task's life). */
export function taskQuestionId(call: ToolCall, turn: number, key: string): string {
  return `${call.id}:${turn}.task:${key}`;
}

/**
 * Ask the person the task's questions (a question asked before, which the server still shows, is not asked again: its
 * answer is sent again), wait at most `leftMs`, and send the answers with `tasks/update`.
 */
export async function answerTaskQuestions(
  context: TurnContext,
  { call, input, polls }: { call: ToolCall; input: ToolTaskInput; polls: number },
  questions: readonly ToolQuestion[],
  leftMs: number,
): Promise<TaskQuestionsOutcome> {
  if (leftMs <= 0) return { kind: 'timeout' };
  const { inputs, observer } = context;
  const asked = questions.map(({ key, ...question }) => {
    const requestId = taskQuestionId(call, context.turn, key);
    inputs.ask({ requestId, callId: call.id, tool: call.name, server: input.tool.server, ...question }, context.turn);
    return { key, requestId };
  });
  const answered = () => asked.every(({ requestId }) => inputs.answerOf(requestId) !== undefined);
  const ending = () => observer.ending?.() === true;
  if (!(await condition(() => answered() || ending(), leftMs))) {
    for (const { requestId } of asked) {
      if (inputs.answerOf(requestId) === undefined) inputs.answer({ requestId, action: 'cancel', by: 'timeout' });
    }
    return { kind: 'timeout' };
  }
  // An interrupt answers the questions `cancel` in the activation that cancels the turn: nothing is sent then.
  if (observer.interrupted()) return { kind: 'interrupted' };
  if (!answered()) return { kind: 'ended' };
  const inputResponses: Record<string, ToolQuestionAnswer> = {};
  for (const { key, requestId } of asked) {
    const { action, content } = inputs.answerOf(requestId)!;
    inputResponses[key] = content === undefined ? { action } : { action, content };
  }
  try {
    return await answerToolTask.executeWithOptions(
      { summary: `turn ${context.turn} · task of ${call.name} · answers after ${polls} polls` },
      [{ ...input, inputResponses }],
    );
  } catch (error) {
    if (isCancellation(error) || !(error instanceof ActivityFailure)) throw error;
    return { kind: 'unsent', reason: errorMessage(error.cause ?? error) };
  }
}
