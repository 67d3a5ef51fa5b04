import { CancelledFailure, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ToolDefinition } from '../shared/types.js';
import { Approvals } from './approvals.js';
import { page } from './conversation-state.js';
import { CostLedger } from './cost-budget.js';
import type { InputAnswer } from '../shared/input-messages.js';
import {
  answerInputUpdate,
  approveUpdate,
  type ApproveRequest,
  type ConversationSettings,
  denyUpdate,
  type DenyRequest,
  modelContextQuery,
} from './definitions.js';
import { InputRequests } from './input-requests.js';
import { EventLog } from './stream-events.js';
import type { AgentTurnInput } from './agent-turn-input.js';
import { ForwardedApprovals, subAgentDecisionSignal } from './sub-agent-approvals.js';
import { ForwardedInputs, subAgentAnswerSignal } from './sub-agent-inputs.js';
import { Transcript } from './transcript.js';
import { runTurn } from './turn.js';
import type { TurnApprovals, TurnContext, TurnObserver } from './turn-context.js';
import type { TurnResult } from './turn-result.js';

export type { AgentTurnInput } from './agent-turn-input.js';

/**
 * One agent turn as a workflow of its own: what a conversation runs as a child for a sub-agent's call, and what an
 * application's workflow runs with `executeChild(agentTurnWorkflow, …)` (docs/embedding.md). Its history is the turn's
 * model and tool calls; its result is the turn's `TurnResult`.
 */

/** Every tool but the sub-agents (`selectTools`). */
const ALL_TOOLS = ['*'];

export async function agentTurnWorkflow(input: AgentTurnInput): Promise<TurnResult> {
  const { workflowId, runId, parent } = workflowInfo();
  const settings: ConversationSettings = { ...input.settings, stream: false };
  const systemPrompt = settings.systemPrompt;
  const messages =
    systemPrompt !== undefined && input.messages[0]?.role !== 'system'
      ? [{ role: 'system' as const, content: systemPrompt }, ...input.messages]
      : input.messages;
  const transcript = new Transcript(messages);
  let tools: ToolDefinition[] = [];
  let toolsDigest: string | undefined;
  setHandler(modelContextQuery, ({ from, limit }) => ({
    from,
    messages: page(transcript.messages, from, limit),
    total: transcript.length,
    tools,
    toolsDigest,
  }));
  const approvals = new Approvals(undefined, new EventLog(), { changed: () => undefined });
  let turnApprovals: TurnApprovals = approvals;
  if (input.parent !== undefined) {
    const forwarded = new ForwardedApprovals(approvals, input.parent);
    setHandler(subAgentDecisionSignal, (decision) => forwarded.decidedInParent(decision), {
      description: 'Internal: the calling conversation forwards a decision on a call waiting here. Do not send.',
    });
    turnApprovals = forwarded;
  } else {
    setHandler(approveUpdate, (request) => approvals.approve(request), {
      validator: (request: ApproveRequest) => approvals.validateApprove(request),
    });
    setHandler(denyUpdate, (request) => approvals.deny(request), {
      validator: (request: DenyRequest) => approvals.validateDeny(request),
    });
  }
  // A 2026-07-28 server's questions (`input_required`) wait in this run and are answered by `answerInput` on its
  // workflow id; a sub-agent's are forwarded to the calling conversation and answered there (docs/embedding.md).
  const inputs = new InputRequests(new EventLog(), () => undefined);
  let turnInputs: TurnContext['inputs'] = inputs;
  if (input.parent !== undefined) {
    const forwarded = new ForwardedInputs(inputs, input.parent);
    setHandler(subAgentAnswerSignal, (answer) => forwarded.answeredInParent(answer), {
      description: 'Internal: the calling conversation forwards an answer to a question waiting here. Do not send.',
    });
    turnInputs = forwarded;
  }
  setHandler(answerInputUpdate, (answer) => turnInputs.answer(answer), {
    validator: (answer: InputAnswer) => inputs.validateAnswer(answer),
  });
  const observer: TurnObserver = {
    progress: () => undefined,
    modelCallStarted: () => undefined,
    modelCallFinished: () => undefined,
    toolsListed: (listed, digest) => {
      tools = listed;
      toolsDigest = digest;
    },
    serversUnavailable: () => undefined,
    toolStarted: () => undefined,
    toolFinished: () => undefined,
    interrupted: () => false,
  };
  const messageId = input.messageId ?? workflowId;
  const result = await runTurn({
    conversationId: messageId,
    workflowId,
    runId,
    turn: 1,
    messageId,
    transcript,
    settings,
    ...(input.output !== undefined ? { output: input.output } : {}),
    observer,
    approvals: turnApprovals,
    inputs: turnInputs,
    costs: new CostLedger(undefined),
    toolSelection: input.tools ?? ALL_TOOLS,
    // A sub-agent's servers ask the person in the calling conversation, which shows and answers questions.
    ...(input.parent && parent ? { questionsTo: { workflowId: parent.workflowId, runId: parent.runId } } : {}),
    // Its calls are the calling conversation's in the tenant's ledger.
    ...(input.parent ? { agentOf: input.parent.workflowId } : {}),
  });
  // Cancelled (its parent was, or a person cancelled it): the Web UI shows the run as cancelled, not completed.
  if (result.stopReason === 'cancelled') throw new CancelledFailure('The agent turn was cancelled.');
  return result;
}
