import { patched, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../worker/activities/index.js';
import { approvalReason } from '../shared/approval-policy.js';
import { FailureType } from '../shared/errors.js';
import { toolResultMessage } from '../shared/tool-messages.js';
import type { CallToolInputRequired, CallToolResult, ToolCall, ToolMessage } from '../shared/types.js';
import type { CallToolTaskCreated } from '../shared/tool-tasks.js';
import { awaitToolTask } from './tool-tasks.js';
import { DEFAULT_TOOL_ATTEMPTS, errorAttemptsAllowed, maximumAttempts } from './attempts.js';
import { toolCallsAllowed } from './budget.js';
import { runSubAgent } from './sub-agents.js';
import { allowToolCalls, callToolInput, type PreparedToolCall, prepareToolCall } from './tool-calls.js';
import { answerServerQuestions, type SendAgain } from './tool-questions.js';
import { awaitApproval, editedNote, type TimeLimit } from './turn-approvals.js';
import { toolFailureMessage } from './turn-failures.js';
import { activityPriority, report, type TurnState } from './turn-state.js';

// A round's tool calls, the half of a turn that ./turn.ts hands each reply's calls to. Its Date.now() reads Temporal's
// workflow time (the workflow sandbox puts it in place of the clock): deterministic on replay. The timeouts and
// retries are chosen as the model call's are (./turn.ts says why).

const { callTool } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  // As the model call's; the heartbeat also records that a request was sent (see docs/mcp.md).
  heartbeatTimeout: '6 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '30 seconds',
    // The tool ran and its result was refused as too large: a retry would run it again for the same result.
    nonRetryableErrorTypes: [FailureType.PayloadsTooLarge],
  },
});

/**
 * The tool calls of one reply, each as its own activity, in parallel; one message per call, in the model's order.
 * Which calls run is decided before any is dispatched: those the tool-call budget has no room for get a message.
 * A call that needs a person's approval waits for its own decision (docs/approvals.md) while the others go on.
 */
export function runToolCalls(turn: TurnState, calls: readonly ToolCall[], limit: TimeLimit): Promise<ToolMessage[]> {
  const { observer, settings, approvals } = turn.context;
  const prepared = calls.map((call) => prepareToolCall(call, turn.tools));
  const dispatchable = prepared.filter((entry) => entry.kind === 'dispatch').length;
  const allowed = toolCallsAllowed(turn.spend, turn.budget, dispatchable);
  const planned = allowToolCalls(prepared, allowed);
  report(turn, `tools · ${calls.map((call) => call.name).join(', ')}`);
  const startedAt = Date.now();
  for (const call of calls) observer.toolStarted(call);
  turn.spend.toolCalls += allowed;
  const finished = (message: ToolMessage): ToolMessage => {
    observer.toolFinished(message, Date.now() - startedAt);
    return message;
  };
  const reasons = planned.map((entry) =>
    entry.kind === 'dispatch' ? approvalReason(entry.tool, settings.approval, approvals.allowedTools) : undefined,
  );
  return Promise.all(
    planned.map(async (entry, index) =>
      entry.kind === 'reject'
        ? finished(entry.message)
        : reasons[index] === undefined
          ? finished(await dispatchToolCall(turn, limit, entry))
          : finished(await approveAndDispatch(turn, limit, entry, reasons[index])),
    ),
  );
}

/**
 * A call that needs approval: wait for the decision, then run it (with a person's edited arguments, noted before its
 * result) or answer it with the denial. A call that does not run does not count against the tool-call budget.
 */
async function approveAndDispatch(
  turn: TurnState,
  limit: TimeLimit,
  entry: Extract<PreparedToolCall, { kind: 'dispatch' }>,
  reason: string,
): Promise<ToolMessage> {
  const outcome = await awaitApproval(turn.context, limit, { ...entry, reason });
  if (outcome.kind === 'message') {
    turn.spend.toolCalls--;
    return outcome.message;
  }
  const message = await dispatchToolCall(turn, limit, { ...entry, arguments: outcome.arguments });
  const edited = outcome.decision.arguments;
  return edited === undefined ? message : { ...message, content: editedNote(edited) + message.content };
}

/**
 * One tool call as its own activity; a 2026-07-28 server's questions are answered by the person and the call sent
 * again as new activities (./tool-questions.ts).
 */
async function dispatchToolCall(
  turn: TurnState,
  limit: TimeLimit,
  { call, tool, arguments: toolArguments }: Extract<PreparedToolCall, { kind: 'dispatch' }>,
): Promise<ToolMessage> {
  // A sub-agent is a child workflow, not an activity; no tool of a release before sub-agents has this source.
  if (tool.source === 'agent') return runSubAgent(turn, call, tool, toolArguments, limit);
  const toolAttempts = errorAttemptsAllowed(turn.context.settings.toolAttempts, DEFAULT_TOOL_ATTEMPTS);
  const lastAttempt = maximumAttempts(toolAttempts);
  // An MCP task (./tool-tasks.ts); no history recorded before tasks has a tool with `task`.
  const asTask = tool.task !== undefined && patched('mcp-tool-tasks');
  const send: SendAgain = (again) =>
    callTool.executeWithOptions(
      {
        summary: `turn ${turn.context.turn} · tool ${call.name}` + (again ? ` · round ${again.inputRound}` : ''),
        // The call's own timeout does not run while the person answers its server's questions (docs/mcp.md).
        startToCloseTimeout: tool.timeoutMs + (tool.elicitationTimeoutMs ?? 0) + 10_000,
        retry: { maximumAttempts: lastAttempt },
        ...activityPriority(turn),
      },
      [
        {
          ...callToolInput(call, tool, toolArguments, toolAttempts, turn.context.questionsTo),
          ...again,
          ...(asTask ? { task: true as const } : {}),
        },
      ],
    );
  try {
    let result: CallToolResult | CallToolInputRequired | CallToolTaskCreated | ToolMessage = await send(undefined);
    if (result.outcome === 'input_required') {
      result = await answerServerQuestions(turn.context, limit, { call, tool }, result, send);
      if ('role' in result) return result;
    }
    if (result.outcome === 'task') {
      result = await awaitToolTask(turn, limit, { call, tool }, result.task);
      if ('role' in result) return result;
    }
    return toolResultMessage(call, result);
  } catch (error) {
    return toolFailureMessage(turn.timedOut, call, tool, error, lastAttempt);
  }
}
