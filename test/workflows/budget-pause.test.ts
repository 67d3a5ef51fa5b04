import type { WorkflowHandle } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { InvalidSettingsError } from '../../src/client/errors.js';
import { FailureType } from '../../src/shared/errors.js';
import type { TestAgent } from '../../src/testing/agent.js';
import { startScriptedModel } from '../../src/testing/scripted-model/index.js';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { BUDGET_PAUSE_PATCH } from '../../src/workflows/budget-pause.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import {
  approveUpdate,
  type ConversationSettings,
  type ConversationStatus,
  denyUpdate,
  interruptSignal,
  type PendingApproval,
} from '../../src/workflows/definitions.js';
import { waitForStatus } from '../helpers/status.js';
import { updateRejection } from '../helpers/updates.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';

const bed = useTimeSkippingWithCrm();
type Handle = WorkflowHandle<typeof conversationWorkflow>;

// Per million tokens: $1 input, $2 output.
const prices = new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } });
const findAda = { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] };
const usage = (prompt_tokens: number, completion_tokens: number) => ({ usage: { prompt_tokens, completion_tokens } });
const DAY = 24 * 60 * 60 * 1000;
let counter = 0;

/**
 * A priced agent whose worker keeps no workflow in its cache: every workflow task replays the history so far, so a
 * pause or a decision that did not replay the same commands fails the test with a determinism error.
 */
function pricedAgent(script: Parameters<typeof bed.agentWith>[0], extra: Parameters<typeof bed.agentWith>[1] = {}) {
  return bed.agentWith(script, { workerOptions: { prices, worker: { maxCachedWorkflows: 0 } }, ...extra });
}

async function start(agent: TestAgent, messages: string[], settings: ConversationSettings): Promise<Handle> {
  const id = `budget-pause-${++counter}`;
  return agent.startConversation(id, {
    settings,
    messages: messages.map((content, index) => ({ id: `${id}-m${index}`, content })),
    closeWhenIdle: true,
  });
}

/** The status once `count` decisions wait, the last of them a held model call other than `not`. */
async function budgetPending(handle: Handle, not?: string): Promise<PendingApproval> {
  const held = (status: ConversationStatus) =>
    status.phase === 'awaiting_approval' &&
    status.pendingApprovals?.length === 1 &&
    status.pendingApprovals[0]!.callId !== not;
  return (await waitForStatus(handle, held)).pendingApprovals![0]!;
}

/** The run's history has the pause's patch marker and replays on the workflow code without a determinism error. */
async function expectReplays(handle: Handle): Promise<void> {
  const history = await handle.fetchHistory();
  const markers = (history.events ?? []).flatMap((event) =>
    Object.values(event.markerRecordedEventAttributes?.details ?? {}).flatMap((details) =>
      (details.payloads ?? []).map((payload) => Buffer.from(payload.data ?? []).toString('utf8')),
    ),
  );
  expect(markers.join(' ')).toContain(BUDGET_PAUSE_PATCH);
  const workflowBundle = await bundleWorkflows();
  await expect(Worker.runReplayHistory({ workflowBundle }, history, handle.workflowId)).resolves.toBeUndefined();
}

describe('budgets that stop and ask', () => {
  it('maxCostUsd with pause: the call waits as a decision; approve goes on once, then with a raised limit', async () => {
    const agent = await pricedAgent([
      { ...findAda, ...usage(1_000, 100) },
      { ...findAda, ...usage(1_200, 100) },
      { content: 'Ada is a customer.', ...usage(1_400, 50) },
    ]);
    const handle = await start(agent, ['Who is Ada?'], {
      budget: { maxCostUsd: 0.002, onCostLimit: 'pause', maxDurationMs: 60_000 },
    });

    // Call 1 cost $0.0012; call 2 sends its input again ($0.001 at least): $0.0022 > $0.002, so call 2 is held.
    const first = await budgetPending(handle);
    expect(first).toMatchObject({
      kind: 'budget',
      callId: 'budget-1-1',
      turn: 1,
      tool: 'budget:cost',
      server: 'budget',
      arguments: { limit: 'cost', limitUsd: 0.002, nextCallUsd: 0.001 },
    });
    expect((first.arguments as { spentUsd: number }).spentUsd).toBeCloseTo(0.0012, 12);
    expect(first.reason).toBe(
      "the turn's cost budget (budget.maxCostUsd) of $0.002000 holds the next model call: $0.001200 spent, the call " +
        'costs $0.001000 or more',
    );
    expect(agent.model.requests).toHaveLength(1);

    // A day passes (skipped): nothing is called, and the paused turn's time budget (one minute) does not run.
    await bed.env.sleep(DAY);
    expect(agent.model.requests).toHaveLength(1);

    // Refused, nothing changes: tool-call fields, and a "raise" that is not above the limit.
    const edited = await updateRejection(
      handle.executeUpdate(approveUpdate, { args: [{ callId: first.callId, arguments: { name: 'Bob' } }] }),
    );
    expect(edited.type).toBe(FailureType.InvalidArguments);
    expect(edited.message).toContain('held by a cost budget');
    const lower = await updateRejection(
      handle.executeUpdate(approveUpdate, { args: [{ callId: first.callId, maxCostUsd: 0.001 }] }),
    );
    expect(lower.type).toBe(FailureType.InvalidArguments);
    expect(lower.message).toContain('above the limit that held the call (0.002)');

    // Approved once: call 2 is made; the limit stays, so call 3 is held in its turn.
    const once = await handle.executeUpdate(approveUpdate, { args: [{ callId: first.callId, by: 'ops' }] });
    expect(once).toMatchObject({ callId: first.callId, decision: 'approved', by: 'ops', tool: 'budget:cost' });
    const second = await budgetPending(handle, first.callId);
    expect(second).toMatchObject({ callId: 'budget-1-2', arguments: { limitUsd: 0.002 } });
    expect(agent.model.requests).toHaveLength(2);

    // Approved with a higher limit: the rest of the turn runs under it.
    const raised = await handle.executeUpdate(approveUpdate, { args: [{ callId: second.callId, maxCostUsd: 0.01 }] });
    expect(raised).toMatchObject({ decision: 'approved', maxCostUsd: 0.01 });
    const outcome = await handle.result();
    expect(outcome.state.lastResult).toMatchObject({
      stopReason: 'completed',
      answer: 'Ada is a customer.',
      rounds: 3,
    });
    expect(outcome.state.lastResult!.durationMs).toBeGreaterThanOrEqual(DAY);
    expect(agent.model.requests).toHaveLength(3);
    const events = (outcome.state.streamEvents ?? []).filter((event) => event.type.startsWith('approval_'));
    expect(events.map((event) => event.type)).toEqual([
      'approval_requested',
      'approval_decided',
      'approval_requested',
      'approval_decided',
    ]);
    await expectReplays(handle);
  });

  it("conversationBudget with pause: deny ends the turn with the limit's stop reason and the decision", async () => {
    const agent = await pricedAgent([
      { content: 'Ada is a customer.', ...usage(1_000, 100) },
      { content: 'Never asked for.' },
    ]);
    const handle = await start(agent, ['Who is Ada?', 'And Bob?'], {
      conversationBudget: { maxCostUsd: 0.001, onCostLimit: 'pause' },
    });
    // Turn 1 spent $0.0012 of the conversation's $0.001: turn 2's first call is held.
    const held = await budgetPending(handle);
    expect(held).toMatchObject({ turn: 2, tool: 'budget:conversationCost', arguments: { limit: 'conversationCost' } });
    const denied = await handle.executeUpdate(denyUpdate, {
      args: [{ callId: held.callId, reason: 'Over budget for the month.', by: 'finance' }],
    });
    expect(denied).toMatchObject({ decision: 'denied', by: 'finance' });

    const outcome = await handle.result();
    expect(outcome.state.lastResult).toMatchObject({
      turn: 2,
      stopReason: 'budget:conversationCost',
      answer: null,
      rounds: 0,
      budgetDenied: { callId: held.callId, decision: 'denied', reason: 'Over budget for the month.', by: 'finance' },
    });
    expect(agent.model.requests).toHaveLength(1);
  });

  it('a raised conversation limit is kept for the later turns; an interrupt cancels a held call', async () => {
    const agent = await pricedAgent([
      { content: 'One.', ...usage(1_000, 100) },
      { content: 'Two.', ...usage(1_000, 100) },
      { content: 'Three.', ...usage(1_000, 100) },
    ]);
    const id = `budget-pause-${++counter}`;
    const handle = await agent.startConversation(id, {
      settings: { conversationBudget: { maxCostUsd: 0.001, onCostLimit: 'pause' } },
      messages: [
        { id: `${id}-1`, content: 'one' },
        { id: `${id}-2`, content: 'two' },
      ],
    });
    const held = await budgetPending(handle);
    await handle.executeUpdate(approveUpdate, { args: [{ callId: held.callId, maxCostUsd: 0.003 }] });
    // Turn 2 ran under the raised limit ($0.0024 spent); a third turn's call ($0.001 at least) would pass $0.003.
    await waitForStatus(handle, (status) => status.phase === 'idle' && status.turns === 2);
    await handle.signal('userMessage', { id: `${id}-3`, content: 'three' });
    const third = await budgetPending(handle, held.callId);
    expect(third).toMatchObject({ turn: 3, arguments: { limitUsd: 0.003 } });
    await handle.signal(interruptSignal, { reason: 'never mind' });
    const status = await waitForStatus(handle, (current) => current.phase === 'idle' && current.turns === 3);
    expect(status.lastResult).toMatchObject({ stopReason: 'cancelled', rounds: 0 });
    expect(status.pendingApprovals).toBeUndefined();
    expect(agent.model.requests).toHaveLength(2);
  });

  it('a held call survives a worker restart and is made once, on the new worker, when approved', async () => {
    const model = await startScriptedModel({
      script: [
        { ...findAda, ...usage(1_000, 100) },
        { content: 'Ada is a customer.', ...usage(1_200, 50) },
      ],
    });
    bed.onCleanup(() => model.close());
    const first = await pricedAgent(undefined, { model });
    const handle = await start(first, ['Who is Ada?'], { budget: { maxCostUsd: 0.001, onCostLimit: 'pause' } });
    const held = await budgetPending(handle);
    await first.close();

    const second = await pricedAgent(undefined, { model, taskQueue: first.taskQueue });
    expect((await budgetPending(handle)).callId).toBe(held.callId);
    await handle.executeUpdate(approveUpdate, { args: [{ callId: held.callId }] });
    const outcome = await handle.result();
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', rounds: 2 });
    expect(model.requests).toHaveLength(2);
    expect(second.taskQueue).toBe(first.taskQueue);
  });

  it('bad settings are refused by the client before anything is sent', async () => {
    const agent = await pricedAgent([]);
    const client = new DurableAgentClient({ client: agent.env.client, taskQueue: agent.taskQueue });
    const wrong = { budget: { maxCostUsd: 1, onCostLimit: 'ask' } } as unknown as ConversationSettings;
    await expect(client.send('budget-pause-bad-1', 'hi', { settings: wrong })).rejects.toThrow(InvalidSettingsError);
    await expect(client.send('budget-pause-bad-1', 'hi', { settings: wrong })).rejects.toThrow(
      'the setting budget.onCostLimit is "ask"; expected "fail" (end the turn, the default) or "pause"',
    );
    await expect(
      client.send('budget-pause-bad-2', 'hi', { settings: { conversationBudget: { onCostLimit: 'pause' } } }),
    ).rejects.toThrow('conversationBudget.maxCostUsd is not set');
    expect(agent.model.requests).toHaveLength(0);
  });
});
