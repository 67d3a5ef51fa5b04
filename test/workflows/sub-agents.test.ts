import type { WorkflowHandle } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatMessage, SubAgentSettings } from '../../src/shared/types.js';
import type { ScriptFunction, ScriptStep } from '../../src/testing/scripted-model/script.js';
import { createToolRegistry, defineSubAgent, defineTool, type ToolRegistry } from '../../src/worker/tools/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { agentTurnWorkflow } from '../../src/workflows/agent-turn.js';
import {
  approveUpdate,
  type ConversationOutcome,
  type ConversationSettings,
  type ConversationStatus,
  interruptSignal,
  pollEventsUpdate,
} from '../../src/workflows/definitions.js';
import { subAgentWorkflowId } from '../../src/workflows/sub-agents.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { waitForStatus } from '../helpers/status.js';

const bed = useTimeSkippingWithCrm();
type Handle = WorkflowHandle<typeof conversationWorkflow>;
let counter = 0;

const USAGE = { prompt_tokens: 100, completion_tokens: 10 };
const CHILD_USAGE = { prompt_tokens: 1000, completion_tokens: 50 };

/** The order store the tools reach by injection, and what was asked of it. */
class OrderStore {
  readonly lookups: string[] = [];
  readonly cancellations: string[] = [];
}

function registry(store: OrderStore, agent: SubAgentSettings): ToolRegistry {
  return createToolRegistry({
    dependencies: { store },
    tools: ({ store: orders }) => [
      defineTool({
        name: 'lookup_order',
        description: 'Look up an order by id.',
        parameters: z.object({ orderId: z.string() }),
        annotations: { readOnlyHint: true },
        execute: ({ orderId }) => {
          orders.lookups.push(orderId);
          return { id: orderId, status: 'shipped' };
        },
      }),
      defineTool({
        name: 'cancel_order',
        description: 'Cancel an order.',
        parameters: z.object({ orderId: z.string() }),
        execute: ({ orderId }) => {
          orders.cancellations.push(orderId);
          return `Order ${orderId} is cancelled.`;
        },
      }),
      defineSubAgent({
        name: 'orders',
        description: 'Answers questions about orders.',
        settings: { systemPrompt: 'You look after orders.', ...agent },
      }),
    ],
  });
}

/** The conversation's steps, and the sub-agent's (its model calls carry the child's workflow id). */
function script(parent: ScriptStep[], child: ScriptStep[]): ScriptFunction {
  return (request, { stepIndex }) => (request.conversation.includes('/agent-') ? child : parent)[stepIndex];
}

async function agentWith(store: OrderStore, steps: ScriptFunction, agent: SubAgentSettings = {}) {
  // No workflow cached: every task replays the history so far, so a path that did not replay the same commands fails.
  return bed.agentWith(steps, {
    workerOptions: { tools: registry(store, agent), worker: { maxCachedWorkflows: 0 } },
  });
}

async function start(
  agent: Awaited<ReturnType<typeof agentWith>>,
  settings: ConversationSettings = {},
): Promise<{ handle: Handle; id: string }> {
  const id = `sub-agents-${++counter}`;
  const handle = await agent.startConversation(id, {
    settings,
    messages: [{ id: `${id}-m`, content: 'What about order o-1?' }],
    closeWhenIdle: true,
  });
  return { handle, id };
}

function toolMessages(outcome: ConversationOutcome): Extract<ChatMessage, { role: 'tool' }>[] {
  return outcome.state.transcript.filter((message) => message.role === 'tool');
}

/** The sub-agent's steps: one call of `tool` on order o-1, then its answer. */
function subAgentCalling(tool: string, answer: string): ScriptStep[] {
  return [
    { toolCalls: [{ name: tool, arguments: { orderId: 'o-1' } }], usage: CHILD_USAGE },
    { content: answer, usage: CHILD_USAGE },
  ];
}

const askAgent = { toolCalls: [{ name: 'agent__orders', arguments: { task: 'Look up order o-1.' } }], usage: USAGE };

/** A conversation that asks the sub-agent, which calls `tool` alone (its selection) and answers; then the reply. */
function agentAsking(store: OrderStore, tool: string, answers: { agent: string; reply: string }) {
  const parent = [askAgent, { content: answers.reply, usage: USAGE }];
  return agentWith(store, script(parent, subAgentCalling(tool, answers.agent)), { tools: [tool] });
}

describe('sub-agents as child workflows', () => {
  it('a sub-agent calls a tool in its own child workflow; its answer is the result and its usage the turn’s', async () => {
    const store = new OrderStore();
    const agent = await agentAsking(store, 'lookup_order', { agent: 'o-1: shipped', reply: 'Order o-1 has shipped.' });
    const { handle, id } = await start(agent);
    const outcome = await handle.result();

    expect(store.lookups).toEqual(['o-1']);
    const [result] = toolMessages(outcome);
    expect(result).toMatchObject({ name: 'agent__orders', outcome: 'ok', content: 'o-1: shipped' });
    // Two calls of the conversation and two of the sub-agent; the sub-agent's tool call counts too.
    expect(outcome.state.lastResult).toMatchObject({
      stopReason: 'completed',
      rounds: 2,
      toolCalls: 2,
      usage: { inputTokens: 2200, outputTokens: 120, totalTokens: 2320 },
    });
    // The child ran with its own prompt and only the tools it was given.
    const childRequests = agent.model.requests.filter((request) => request.conversation.includes('/agent-'));
    expect(childRequests).toHaveLength(2);
    expect(childRequests[0]!.messages.slice(0, 2)).toEqual([
      { role: 'system', content: 'You look after orders.' },
      { role: 'user', content: 'Look up order o-1.' },
    ]);
    expect(childRequests[0]!.tools!.map((tool) => (tool.type === 'function' ? tool.function.name : ''))).toEqual([
      'lookup_order',
    ]);
    // The conversation's model saw the sub-agent as a tool with one `task` argument.
    const offered = agent.model.requests[0]!.tools!.flatMap((tool) =>
      tool.type === 'function' ? [tool.function] : [],
    );
    expect(offered.find((tool) => tool.name === 'agent__orders')).toMatchObject({
      description: 'Answers questions about orders.',
      parameters: { properties: { task: { type: 'string' } }, required: ['task'] },
    });
    // A child of the conversation, with its own history.
    const callId = (
      outcome.state.transcript.find((message) => message.role === 'assistant') as { toolCalls: { id: string }[] }
    ).toolCalls[0]!.id;
    const child = await bed.env.client.workflow
      .getHandle(subAgentWorkflowId(`conversation-${id}`, 1, callId))
      .describe();
    expect(child.type).toBe('agentTurnWorkflow');
    expect(child.status.name).toBe('COMPLETED');
    expect(child.parentExecution?.workflowId).toBe(`conversation-${id}`);
  });

  it('budget: the sub-agent gets what is left of the turn’s tool calls; when it runs out the result is an error', async () => {
    const store = new OrderStore();
    const lookup = (orderId: string) => ({ name: 'lookup_order', arguments: { orderId } });
    const agent = await agentWith(
      store,
      script(
        [askAgent, { content: 'I could not finish.', usage: USAGE }],
        [
          { toolCalls: [lookup('o-1'), lookup('o-2'), lookup('o-3')], usage: CHILD_USAGE },
          { content: 'Only o-1: shipped.', usage: CHILD_USAGE },
        ],
      ),
      { budget: { maxToolCalls: 10 } },
    );
    // Three tool calls for the turn: the sub-agent's call is one, so the sub-agent may make two, not its own ten.
    const { handle } = await start(agent, { budget: { maxToolCalls: 3 } });
    const outcome = await handle.result();

    expect(store.lookups.sort()).toEqual(['o-1', 'o-2']);
    const [result] = toolMessages(outcome);
    expect(result).toMatchObject({ name: 'agent__orders', outcome: 'error' });
    expect(result!.content).toContain('its budget ran out (budget:toolCalls)');
    expect(result!.content).toContain('Only o-1: shipped.');
    // Its two calls are charged back: the turn has none left either, and answers without another tool call.
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'budget:toolCalls', toolCalls: 3 });
  });

  it('an approval inside the sub-agent waits in the conversation and is answered by its approve', async () => {
    const store = new OrderStore();
    const agent = await agentAsking(store, 'cancel_order', {
      agent: 'Cancelled o-1.',
      reply: 'Order o-1 is cancelled.',
    });
    const { handle } = await start(agent, { approval: { require: ['cancel_order'] } });
    const waiting = await waitForStatus(
      handle,
      (status: ConversationStatus) => status.phase === 'awaiting_approval' && status.pendingApprovals?.length === 1,
    );
    const [pending] = waiting.pendingApprovals!;
    expect(pending).toMatchObject({ tool: 'cancel_order', server: 'worker', arguments: { orderId: 'o-1' } });
    expect(pending!.reason).toMatch(/^sub-agent orders: /);
    expect(store.cancellations).toEqual([]);
    // The conversation's stream, which chat and serve read, has it too.
    const { events } = await handle.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] });
    expect(events.find((event) => event.type === 'approval_requested')).toMatchObject({
      callId: pending!.callId,
      tool: 'cancel_order',
    });

    const decision = await handle.executeUpdate(approveUpdate, { args: [{ callId: pending!.callId, by: 'ada' }] });
    expect(decision).toMatchObject({ decision: 'approved', by: 'ada' });
    const outcome = await handle.result();

    expect(store.cancellations).toEqual(['o-1']);
    expect(toolMessages(outcome)[0]).toMatchObject({ outcome: 'ok', content: 'Cancelled o-1.' });
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed' });
  });

  it('interrupting the conversation cancels the sub-agent’s child workflow', async () => {
    const store = new OrderStore();
    const agent = await agentWith(
      store,
      // The sub-agent never answers: it is cancelled while its call waits for approval.
      script([askAgent], subAgentCalling('cancel_order', 'Never said.')),
      { tools: ['cancel_order'] },
    );
    const { handle, id } = await start(agent, { approval: { require: ['cancel_order'] } });
    const waiting = await waitForStatus(handle, (status: ConversationStatus) => status.phase === 'awaiting_approval');
    const childId = `conversation-${id}/turn-1/agent-${waiting.pendingApprovals![0]!.callId.split('/')[0]}`;
    await handle.signal(interruptSignal, { reason: 'never mind' });
    // Read by query, not by awaiting the result: that would let the test server skip time while the child is cancelled.
    const status = await waitForStatus(handle, (current) => current.lastResult?.stopReason === 'cancelled');
    expect(status.pendingApprovals).toBeUndefined();
    const child = bed.env.client.workflow.getHandle(childId);
    await expect(child.result()).rejects.toThrow(/cancelled/i);
    expect((await child.describe()).status.name).toBe('CANCELLED');
    expect(store.cancellations).toEqual([]);
  });

  it('agentTurnWorkflow runs one turn on its own and returns the TurnResult', async () => {
    const store = new OrderStore();
    const agent = await agentWith(
      store,
      script(
        [],
        [
          { toolCalls: [{ name: 'lookup_order', arguments: { orderId: 'o-7' } }], usage: CHILD_USAGE },
          { content: 'o-7 has shipped.', usage: CHILD_USAGE },
        ],
      ),
    );
    const result = await bed.env.client.workflow.execute(agentTurnWorkflow, {
      // `/agent-` in the id: the scripted model gives this run the sub-agent's steps.
      workflowId: `order-${++counter}/agent-draft`,
      taskQueue: agent.taskQueue,
      args: [{ messages: [{ role: 'user', content: 'Where is o-7?' }], settings: { systemPrompt: 'Be brief.' } }],
    });

    expect(result).toMatchObject({ answer: 'o-7 has shipped.', stopReason: 'completed', rounds: 2, toolCalls: 1 });
    expect(store.lookups).toEqual(['o-7']);
    // Every tool but the sub-agents, by default.
    const offered = agent.model.requests[0]!.tools!.map((tool) => (tool.type === 'function' ? tool.function.name : ''));
    expect(offered).toContain('lookup_order');
    expect(offered).not.toContain('agent__orders');
  });
});
