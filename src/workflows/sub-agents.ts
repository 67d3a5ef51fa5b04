import { ChildWorkflowFailure, condition, isCancellation, ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { CostSpend, SubAgentSettings, ToolCall, ToolDefinition, ToolMessage } from '../shared/types.js';
import type { AgentTurnInput } from './agent-turn-input.js';
import { addUsage, timeLeft, type TurnBudget, type TurnSpend } from './budget.js';
import type { ConversationSettings } from './definitions.js';
import { subAgentDecisionSignal } from './sub-agent-approvals.js';
import { subAgentAnswerSignal } from './sub-agent-inputs.js';
import { SYNTHETIC_RESULTS, toolMessage } from './tool-calls.js';
import type { TurnContext, WaitClock } from './turn-context.js';
import type { TurnResult } from './turn-result.js';

/**
 * A call of a sub-agent's tool (`defineSubAgent`): one turn of `agentTurnWorkflow` as a child workflow, with a budget
 * carved out of what is left of the calling turn's and its spend charged back to it. Its answer is the tool's result;
 * a failure or a budget stop is an error result, as a failing tool's.
 */

/** What the calling turn lends and charges: its budget, its spend, and whether its time limit fired. */
export interface CallingTurn {
  readonly context: TurnContext;
  readonly budget: TurnBudget;
  readonly spend: TurnSpend;
  readonly timedOut: boolean;
  /** The model the calling turn uses: the sub-agent's default. */
  readonly model: string | undefined;
}

/** The child's workflow id: the same for the same call on replay, apart for every call of the conversation. */
export function subAgentWorkflowId(workflowId: string, turn: number, callId: string): string {
  return `${workflowId}/turn-${turn}/agent-${callId}`;
}

export async function runSubAgent(
  calling: CallingTurn,
  call: ToolCall,
  tool: ToolDefinition,
  toolArguments: Record<string, unknown>,
  clock: WaitClock,
): Promise<ToolMessage> {
  const { context } = calling;
  const agent = tool.agent ?? {};
  const links = context.subAgents;
  links?.open(call.id, clock);
  let done = false;
  try {
    // By name: this module is part of the turn that agentTurnWorkflow runs.
    const child = await startChild<(input: AgentTurnInput) => Promise<TurnResult>>('agentTurnWorkflow', {
      workflowId: subAgentWorkflowId(context.workflowId, context.turn, call.id),
      // Cancelled with the conversation: an interrupt cancels the turn's scope, which cancels the child; a terminated
      // parent leaves no child running.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      args: [
        {
          // The argument was checked against the sub-agent's schema before dispatch: a string.
          messages: [{ role: 'user', content: String(toolArguments.task) }],
          settings: childSettings(calling, agent),
          ...(agent.tools !== undefined ? { tools: agent.tools } : {}),
          parent: { workflowId: context.workflowId, callId: call.id, agent: tool.originalName },
        },
      ],
    });
    // A person's decisions on the child's calls and answers to its questions, given here, go to the child as they
    // come. Copies of questions exist only for children that forwarded them: no recorded history has an answer to send.
    const forwarding = (async () => {
      while (links !== undefined && !done) {
        await condition(() => done || links.hasDecided(call.id) || links.hasAnswered(call.id));
        for (const decision of links.takeDecided(call.id)) await child.signal(subAgentDecisionSignal, decision);
        for (const answer of links.takeAnswered(call.id)) await child.signal(subAgentAnswerSignal, answer);
      }
    })();
    forwarding.catch(() => undefined);
    const result = await child.result();
    chargeBack(calling, result);
    return resultMessage(call, tool, result);
  } catch (error) {
    if (isCancellation(error) || (error instanceof ChildWorkflowFailure && isCancellation(error.cause))) {
      return calling.timedOut ? SYNTHETIC_RESULTS.timeBudgetCancelled(call) : SYNTHETIC_RESULTS.cancelled(call);
    }
    const cause = error instanceof ChildWorkflowFailure ? (error.cause ?? error) : error;
    const reason = cause instanceof Error ? cause.message : String(cause);
    return toolMessage(call, 'error', `Error: the agent ${tool.originalName} failed and gave no answer: ${reason}`);
  } finally {
    done = true;
    links?.close(call.id, 'sub-agent', `the agent ${tool.originalName} finished without this call`);
  }
}

/**
 * The child's settings: the sub-agent's model and prompt, the conversation's tenant (its calls go to the tenant's
 * ledger and are checked against its daily limit), approval and attempt rules, and each limit at most what the calling
 * turn has left (its tool calls after this one, its tokens, cost and time). Only the child's input: no patch.
 */
function childSettings(calling: CallingTurn, agent: SubAgentSettings): ConversationSettings {
  const { context, budget, spend } = calling;
  const { settings } = context;
  const own = agent.budget ?? {};
  const least = (mine: number | undefined, left: number) => Math.max(0, Math.min(mine ?? left, left));
  // Date.now() in workflow code reads Temporal's workflow time (the sandbox replaces the clock): the same on replay.
  const carved: Partial<TurnBudget> = {
    ...(own.maxRounds !== undefined ? { maxRounds: own.maxRounds } : {}),
    maxToolCalls: least(own.maxToolCalls, budget.maxToolCalls - spend.toolCalls),
    maxTokens: least(own.maxTokens, budget.maxTokens - spend.usage.totalTokens),
    maxDurationMs: least(own.maxDurationMs, timeLeft(spend, budget, Date.now())),
  };
  if (budget.maxCostUsd !== undefined || own.maxCostUsd !== undefined) {
    const left = budget.maxCostUsd !== undefined ? budget.maxCostUsd - (spend.cost?.usd ?? 0) : Infinity;
    carved.maxCostUsd = least(own.maxCostUsd, left);
  }
  const conversationLimit = settings.conversationBudget?.maxCostUsd;
  return {
    model: agent.model ?? calling.model,
    ...(agent.systemPrompt !== undefined ? { systemPrompt: agent.systemPrompt } : {}),
    budget: carved,
    ...(conversationLimit !== undefined
      ? { conversationBudget: { maxCostUsd: Math.max(0, conversationLimit - context.costs.total.usd) } }
      : {}),
    ...(settings.tenant !== undefined ? { tenant: settings.tenant } : {}),
    ...(settings.approval !== undefined ? { approval: settings.approval } : {}),
    ...(settings.modelAttempts !== undefined ? { modelAttempts: settings.modelAttempts } : {}),
    ...(settings.toolAttempts !== undefined ? { toolAttempts: settings.toolAttempts } : {}),
    ...(settings.finalAnswer !== undefined ? { finalAnswer: settings.finalAnswer } : {}),
  };
}

/** The child's spend is the calling turn's: its tokens, cost and tool calls count against the turn's limits. */
function chargeBack(calling: CallingTurn, result: TurnResult): void {
  const { spend, context } = calling;
  spend.usage = addUsage(spend.usage, result.usage);
  spend.toolCalls += result.toolCalls;
  if (result.cost !== undefined) {
    spend.cost = addSpend(spend.cost ?? { usd: 0 }, result.cost);
    context.costs.charge(result.cost);
  }
}

function addSpend(a: CostSpend, b: CostSpend): CostSpend {
  const unpriced = (a.unpricedCalls ?? 0) + (b.unpricedCalls ?? 0);
  return { usd: a.usd + b.usd, ...(unpriced > 0 ? { unpricedCalls: unpriced } : {}) };
}

/** The child's answer as the tool's result; a stop without a complete answer is an error the model can read. */
function resultMessage(call: ToolCall, tool: ToolDefinition, result: TurnResult): ToolMessage {
  const answer = result.output !== undefined ? JSON.stringify(result.output) : (result.answer ?? '');
  if (result.stopReason === 'completed') return toolMessage(call, 'ok', answer);
  const why = result.stopReason.startsWith('budget:')
    ? `its budget ran out (${result.stopReason})`
    : `it failed (${result.stopReason}${result.error ? `: ${result.error.message}` : ''})`;
  const partial = result.answer ? ` What it said before it stopped: ${result.answer}` : '';
  return toolMessage(
    call,
    'error',
    `Error: the agent ${tool.originalName} stopped before it finished: ${why}.${partial}`,
  );
}
