import type { CallToolInput, CallToolResult, ToolQuestion, ToolQuestionAnswer } from './types.js';

/**
 * MCP tasks (docs/mcp.md, "Tasks: calls that outlive a request"): a server answers a tool call with a task and the
 * result later. These are the plain JSON shapes the workflow records while it waits for one.
 */

/** A task's state, as the server reports it. `completed`, `failed` and `cancelled` are final. */
export type ToolTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** An MCP task a server created for a tool call: what the workflow keeps to ask about it. */
export interface ToolTask {
  taskId: string;
  status: ToolTaskStatus;
  /** The server's words on where the task is, if it gave any. */
  statusMessage?: string;
  /** How often the server suggests asking, in milliseconds. */
  pollIntervalMs?: number;
  /** How long the server keeps the task after it was created, in milliseconds; absent: unbounded or unsaid. */
  ttlMs?: number;
  /**
   * A 2025-11-25 server over Streamable HTTP keeps its tasks per session: the session the task was created in, which
   * every later request about it is sent on (from any worker). Absent over stdio and without sessions.
   */
  sessionId?: string;
}

/** The `callTool` activity's answer when the server created a task instead of answering the call. */
export interface CallToolTaskCreated {
  outcome: 'task';
  task: ToolTask;
}

/** Input of the task activities (`pollToolTask`, `toolTaskResult`, `cancelToolTask`). */
export interface ToolTaskInput {
  toolCallId: string;
  tool: CallToolInput['tool'];
  task: Pick<ToolTask, 'taskId' | 'sessionId'>;
  /** As in {@link CallToolInput}: where the server's questions go; absent, the run that scheduled the activity. */
  questionsTo?: CallToolInput['questionsTo'];
  /**
   * The workflow asks a 2026-07-28 task's questions itself: a poll brings them, `toolTaskResult` never waits for an
   * answer. Absent in the activities of a turn recorded before (where `toolTaskResult` asked them), so such an
   * activity, retried on a newer worker, behaves as it did.
   */
  questionsToWorkflow?: true;
}

/** Input of `answerToolTask`: a 2026-07-28 task's answers, by the server's keys (`tasks/update`). */
export interface ToolTaskAnswerInput extends ToolTaskInput {
  inputResponses: Record<string, ToolQuestionAnswer>;
}

/** What `answerToolTask` got: the server took the answers, or it does not know the task (any more). */
export type ToolTaskAnswered = { kind: 'sent' } | { kind: 'gone'; reason: string };

/**
 * One `tasks/get`: the task as it is now, or `gone` when the server does not know it (any more): it expired, the
 * server restarted, or the id was never its own. A 2026-07-28 task that waits for input brings its `questions` (with
 * `questionsToWorkflow`); its result, which its `tasks/get` also carries, is left to `toolTaskResult`, so that the
 * poll's record in history stays small.
 */
export type ToolTaskPoll =
  { kind: 'status'; task: ToolTask; questions?: ToolQuestion[] } | { kind: 'gone'; reason: string };

/**
 * What `toolTaskResult` got: the call's result (the task is over), `answered` (a question of the task was answered
 * and the task goes on: poll again), or `gone` as above.
 */
export type ToolTaskOutcome =
  { kind: 'result'; result: CallToolResult } | { kind: 'answered' } | { kind: 'gone'; reason: string };
