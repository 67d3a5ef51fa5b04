import type { WorkflowHandle } from '@temporalio/client';
import { defineQuery } from '@temporalio/workflow';
// @temporalio/proto is CommonJS: Node's ESM loader offers its exports on the default import only.
import proto from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../../src/worker/mcp/config.js';
import { FailureType } from '../../src/shared/errors.js';
import type { ChatMessage } from '../../src/shared/types.js';
import type { TestAgentOptions } from '../../src/testing/agent.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import {
  approveUpdate,
  type ConversationOutcome,
  type ConversationSettings,
  type ConversationStatus,
  denyUpdate,
  interruptSignal,
  pollEventsUpdate,
  statusQuery,
  transcriptQuery,
} from '../../src/workflows/definitions.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { updateRejection } from '../helpers/updates.js';
import { expectValidToolPairing, toolResults } from '../helpers/transcript.js';
import { queryOf, waitForStatus } from '../helpers/status.js';

const bed = useTimeSkippingWithCrm();
const { temporal } = proto;
type Handle = WorkflowHandle<typeof conversationWorkflow>;

const DAY = 24 * 60 * 60 * 1000;
let counter = 0;
const upgrade = (userId = 'u-1', value = 'pro') => ({
  name: 'crm__update_field',
  arguments: { userId, field: 'plan', value },
});

/**
 * An agent whose CRM server asks for approval of every tool not annotated read-only (`writes`). Its worker keeps no
 * workflow in its cache: every workflow task replays the history so far, so a wait or a decision that did not replay
 * the same commands would fail the test with a determinism error.
 */
function agentWith(
  script: TestAgentOptions['script'],
  server: Partial<HttpServerConfig> = { requireApproval: 'writes' },
) {
  return bed.agentWith(script, {
    mcpServers: [bed.crm.config('crm', server)],
    workerOptions: { worker: { maxCachedWorkflows: 0 } },
  });
}

/** Start a conversation with `messages` that closes when it has answered them. */
async function start(
  agent: Awaited<ReturnType<typeof agentWith>>,
  messages: string[],
  settings: ConversationSettings = {},
  closeWhenIdle = true,
): Promise<Handle> {
  const id = `approvals-${++counter}`;
  return agent.startConversation(id, {
    settings,
    messages: messages.map((content, index) => ({ id: `${id}-m${index}`, content })),
    closeWhenIdle,
  });
}

/** The whole transcript of a conversation that stays open. */
async function transcriptOf(handle: Handle): Promise<ChatMessage[]> {
  return (await queryOf(handle, transcriptQuery)).messages;
}

const pendingCount = (count: number) => (status: ConversationStatus) =>
  status.phase === 'awaiting_approval' && status.pendingApprovals?.length === count;

async function outcomeOf(handle: Handle): Promise<ConversationOutcome> {
  return await handle.result();
}

function toolMessages(from: ConversationOutcome | ChatMessage[]): Extract<ChatMessage, { role: 'tool' }>[] {
  const transcript = Array.isArray(from) ? from : from.state.transcript;
  return transcript.filter((message) => message.role === 'tool');
}

/** The values of DurableAgentStatus the run upserted, in order. */
async function upsertedStatuses(handle: Handle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    if (event.eventType !== temporal.api.enums.v1.EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES) return [];
    const field =
      event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.DurableAgentStatus;
    return field ? [JSON.parse(Buffer.from(field.data!).toString()) as string] : [];
  });
}

const calls = (tool: string) => bed.crm.calls[tool] ?? 0;

describe('a tool call that needs approval', () => {
  it('waits three days for a person, at no cost and outside the time budget, then runs exactly once', async () => {
    const agent = await agentWith([{ toolCalls: [upgrade()] }, { content: 'Ada is on the pro plan now.' }]);
    const before = calls('update_field');
    const handle = await start(agent, ['Upgrade Ada to pro.'], { budget: { maxDurationMs: 60_000 } });

    const status = await waitForStatus(handle, pendingCount(1));
    const [pending] = status.pendingApprovals!;
    expect(pending).toMatchObject({
      turn: 1,
      tool: 'crm__update_field',
      server: 'crm',
      arguments: { userId: 'u-1', field: 'plan', value: 'pro' },
      reason: 'server "crm" requires approval of tools not annotated read-only',
    });
    expect(pending!.expiresAt).toBeUndefined();
    const metadata = await queryOf(handle, defineQuery<{ currentDetails: string }>('__temporal_workflow_metadata'));
    expect(metadata.currentDetails).toContain('awaiting_approval');
    expect(metadata.currentDetails).toContain(`crm__update_field ${pending!.callId}`);

    // Three days pass (the test server skips them): nothing ran, nothing timed out.
    await bed.env.sleep(3 * DAY);
    expect(calls('update_field')).toBe(before);
    expect((await queryOf(handle, statusQuery)).phase).toBe('awaiting_approval');

    const decision = await handle.executeUpdate(approveUpdate, {
      args: [{ callId: pending!.callId, by: 'ops@example.com' }],
    });
    expect(decision).toMatchObject({ callId: pending!.callId, decision: 'approved', by: 'ops@example.com', turn: 1 });
    expect(Date.parse(decision.decidedAt) - Date.parse(pending!.requestedAt)).toBeGreaterThanOrEqual(3 * DAY);

    const outcome = await outcomeOf(handle);
    expect(outcome.state.lastResult).toMatchObject({ stopReason: 'completed', toolCalls: 1 });
    expect(outcome.state.lastResult!.durationMs).toBeGreaterThanOrEqual(3 * DAY);
    expect(calls('update_field')).toBe(before + 1);
    expect(toolMessages(outcome)).toMatchObject([{ outcome: 'ok', name: 'crm__update_field' }]);
    expectValidToolPairing(agent.model.requests[1]!.messages);

    const events = outcome.state.streamEvents ?? [];
    expect(events.filter((event) => event.type.startsWith('approval_'))).toMatchObject([
      { type: 'approval_requested', callId: pending!.callId, tool: 'crm__update_field' },
      { type: 'approval_decided', callId: pending!.callId, decision: 'approved', by: 'ops@example.com' },
    ]);
    // The search attribute says so too: `list --status awaiting_approval` finds the conversation while it waits.
    expect(await upsertedStatuses(handle)).toEqual(['running', 'awaiting_approval', 'running', 'idle']);
  });

  it('is denied with a reason the model gets; a denied call does not count, and late decisions are refused', async () => {
    const agent = await agentWith([{ toolCalls: [upgrade()] }, { content: 'I left the plan as it is.' }]);
    const before = calls('update_field');
    const handle = await start(agent, ['Upgrade Ada to pro.'], {}, false);
    const [pending] = (await waitForStatus(handle, pendingCount(1))).pendingApprovals!;

    const unknown = await updateRejection(handle.executeUpdate(approveUpdate, { args: [{ callId: 'call_nope' }] }));
    expect(unknown.type).toBe(FailureType.UnknownApproval);
    expect(unknown.message).toContain(pending!.callId);
    const noReason = await updateRejection(
      handle.executeUpdate(denyUpdate, { args: [{ callId: pending!.callId, reason: ' ' }] }),
    );
    expect(noReason.type).toBe(FailureType.InvalidArguments);
    expect((await queryOf(handle, statusQuery)).pendingApprovals).toEqual([pending]);

    const reason = 'Ada stays on the basic plan until her contract is renewed.';
    const decision = await handle.executeUpdate(denyUpdate, {
      args: [{ callId: pending!.callId, reason, by: 'ops@example.com' }],
    });
    expect(decision).toMatchObject({ decision: 'denied', reason, by: 'ops@example.com' });

    const status = await waitForStatus(handle, (current) => current.phase === 'idle' && current.turns === 1);
    expect(calls('update_field')).toBe(before);
    expect(status.lastResult).toMatchObject({ stopReason: 'completed', toolCalls: 0 });
    const [denied] = toolResults(agent.model.requests[1]!.messages);
    expect(denied!.content).toContain(reason);
    expect(toolMessages(await transcriptOf(handle))).toMatchObject([{ outcome: 'denied' }]);

    const again = await updateRejection(handle.executeUpdate(approveUpdate, { args: [{ callId: pending!.callId }] }));
    expect(again.type).toBe(FailureType.AlreadyDecided);
  });

  it('runs with arguments a person edited (checked against the schema first); the model’s stay in the transcript', async () => {
    const agent = await agentWith([{ toolCalls: [upgrade('u-2', 'pro')] }, { content: 'Done.' }]);
    const handle = await start(agent, ['Upgrade Alan to pro.']);
    const [pending] = (await waitForStatus(handle, pendingCount(1))).pendingApprovals!;

    const invalid = await updateRejection(
      handle.executeUpdate(approveUpdate, {
        args: [{ callId: pending!.callId, arguments: { userId: 'u-2', field: 'plan' } }],
      }),
    );
    expect(invalid.type).toBe(FailureType.InvalidArguments);
    expect(invalid.message).toContain('value');
    expect((await queryOf(handle, statusQuery)).pendingApprovals).toEqual([pending]);
    expect(bed.crm.records.get('u-2')).toBeUndefined();

    const edited = { userId: 'u-2', field: 'plan', value: 'enterprise' };
    await handle.executeUpdate(approveUpdate, { args: [{ callId: pending!.callId, arguments: edited, by: 'ops' }] });
    const outcome = await outcomeOf(handle);
    expect(bed.crm.records.get('u-2')).toEqual({ plan: 'enterprise' });
    const assistant = outcome.state.transcript.find((message) => message.role === 'assistant' && message.toolCalls);
    expect(assistant).toMatchObject({ toolCalls: [{ arguments: JSON.stringify(upgrade('u-2', 'pro').arguments) }] });
    const [result] = toolMessages(outcome);
    expect(result).toMatchObject({ outcome: 'ok' });
    expect(result!.content).toContain(`it ran with ${JSON.stringify(edited)}`);
    expect(toolResults(agent.model.requests[1]!.messages)[0]!.content).toContain('"value":"enterprise"');
  });

  it('approved "always", the tool runs without asking for the rest of the conversation, across runs', async () => {
    const agent = await agentWith([
      { toolCalls: [upgrade('u-1', 'pro')] },
      { content: 'Done.' },
      { toolCalls: [upgrade('u-1', 'basic')] },
      { content: 'Done again.' },
    ]);
    const before = calls('update_field');
    // A second wait would time out in a day and be denied: the assertions below would see it. One turn per run: the
    // second turn is answered by the next run (continue-as-new), which gets the allowed tool with the state.
    const settings = { approval: { timeoutMs: DAY }, maxTurnsPerRun: 1 };
    const handle = await start(agent, ['Upgrade Ada.', 'Downgrade Ada.'], settings);
    const [pending] = (await waitForStatus(handle, pendingCount(1))).pendingApprovals!;
    await handle.executeUpdate(approveUpdate, { args: [{ callId: pending!.callId, always: true }] });
    const outcome = await outcomeOf(handle);
    const { firstExecutionRunId } = handle as Handle & { firstExecutionRunId: string };
    expect((await handle.describe()).runId).not.toBe(firstExecutionRunId);
    expect(calls('update_field')).toBe(before + 2);
    expect(toolMessages(outcome).map((message) => message.outcome)).toEqual(['ok', 'ok']);
    expect(outcome.state.allowedTools).toEqual(['crm__update_field']);
    expect((outcome.state.streamEvents ?? []).filter((event) => event.type === 'approval_requested')).toHaveLength(1);
  });

  it('a timeout applies the conversation’s policy: deny by default, or approve', async () => {
    const denyAgent = await agentWith([{ toolCalls: [upgrade()] }, { content: 'Nobody answered.' }]);
    const before = calls('update_field');
    const denied = await outcomeOf(await start(denyAgent, ['Upgrade Ada.'], { approval: { timeoutMs: 2 * DAY } }));
    expect(calls('update_field')).toBe(before);
    expect(toolMessages(denied)).toMatchObject([{ outcome: 'denied' }]);
    expect(toolResults(denyAgent.model.requests[1]!.messages)[0]!.content).toContain('within 2 days');
    expect((denied.state.streamEvents ?? []).find((event) => event.type === 'approval_decided')).toMatchObject({
      decision: 'denied',
      by: 'timeout',
    });

    const approveAgent = await agentWith([{ toolCalls: [upgrade()] }, { content: 'Upgraded.' }]);
    const approved = await outcomeOf(
      await start(approveAgent, ['Upgrade Ada.'], { approval: { timeoutMs: DAY, onTimeout: 'approve' } }),
    );
    expect(calls('update_field')).toBe(before + 1);
    expect(toolMessages(approved)).toMatchObject([{ outcome: 'ok' }]);
    expect(approved.state.lastResult).toMatchObject({ toolCalls: 1 });
  });

  it('parallel calls are decided one by one; read-only calls do not wait', async () => {
    const agent = await agentWith([
      {
        toolCalls: [
          upgrade('u-1', 'gold'),
          { name: 'crm__find_user', arguments: { name: 'Alan' } },
          upgrade('u-2', 'gold'),
        ],
      },
      { content: 'One of two.' },
    ]);
    const before = { update: calls('update_field'), find: calls('find_user') };
    const handle = await start(agent, ['Both to gold.']);
    const [first, second] = (await waitForStatus(handle, pendingCount(2))).pendingApprovals!;
    expect(calls('find_user')).toBe(before.find + 1);
    await handle.executeUpdate(denyUpdate, { args: [{ callId: second!.callId, reason: 'Not Alan.' }] });
    expect((await waitForStatus(handle, pendingCount(1))).pendingApprovals).toEqual([first]);
    await handle.executeUpdate(approveUpdate, { args: [{ callId: first!.callId }] });
    const outcome = await outcomeOf(handle);
    expect(calls('update_field')).toBe(before.update + 1);
    expect(bed.crm.records.get('u-1')).toMatchObject({ plan: 'gold' });
    expect(toolMessages(outcome).map((message) => message.outcome)).toEqual(['ok', 'ok', 'denied']);
    expect(outcome.state.lastResult).toMatchObject({ toolCalls: 2 });
    expectValidToolPairing(agent.model.requests[1]!.messages);
  });

  it('an interrupt turns a pending approval into a cancellation (the conversation overrides the server)', async () => {
    // The server asks for no approval; the conversation's `require` overrides it.
    const agent = await agentWith([{ toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] }], {});
    const before = calls('find_user');
    const handle = await start(agent, ['Find Ada.'], { approval: { require: ['crm__find_*'] } }, false);
    const [pending] = (await waitForStatus(handle, pendingCount(1))).pendingApprovals!;
    expect(pending!.reason).toBe('the conversation lists "crm__find_*" as needing approval');
    await handle.signal(interruptSignal, { reason: 'never mind' });
    const status = await waitForStatus(handle, (current) => current.phase === 'idle' && current.turns === 1);
    expect(calls('find_user')).toBe(before);
    expect(status.lastResult).toMatchObject({ stopReason: 'cancelled', toolCalls: 0 });
    expect(status.pendingApprovals).toBeUndefined();
    const transcript = await transcriptOf(handle);
    expect(toolMessages(transcript)).toMatchObject([{ outcome: 'cancelled' }]);
    expect(transcript.at(-1)).toEqual({ role: 'assistant', content: '[The user interrupted this turn: never mind.]' });
    const { events } = await handle.executeUpdate(pollEventsUpdate, { args: [{ from: 0, waitMs: 0 }] });
    expect(events.find((event) => event.type === 'approval_decided')).toMatchObject({
      callId: pending!.callId,
      decision: 'denied',
      by: 'interrupt',
    });
    const late = await updateRejection(handle.executeUpdate(approveUpdate, { args: [{ callId: pending!.callId }] }));
    expect(late.type).toBe(FailureType.AlreadyDecided);
  });

  it('the tool-call budget is decided before anyone is asked; a denied call gives its place back', async () => {
    const agent = await agentWith([
      { toolCalls: [upgrade('u-1', 'silver'), upgrade('u-2', 'silver')] },
      { toolCalls: [upgrade('u-2', 'silver')] },
      { content: 'Alan is on silver.' },
    ]);
    const before = calls('update_field');
    const handle = await start(agent, ['Both to silver.'], { budget: { maxToolCalls: 1 } });
    // Only the call the budget has room for asks; the other is refused at once.
    const [first] = (await waitForStatus(handle, pendingCount(1))).pendingApprovals!;
    expect(first!.arguments).toMatchObject({ userId: 'u-1' });
    await handle.executeUpdate(denyUpdate, { args: [{ callId: first!.callId, reason: 'Not Ada.' }] });
    // The denial gave the call back: the model's next call fits in the budget and asks.
    const [second] = (
      await waitForStatus(
        handle,
        (status) => pendingCount(1)(status) && status.pendingApprovals![0]!.callId !== first!.callId,
      )
    ).pendingApprovals!;
    expect(second!.arguments).toMatchObject({ userId: 'u-2' });
    await handle.executeUpdate(approveUpdate, { args: [{ callId: second!.callId }] });
    const outcome = await outcomeOf(handle);
    expect(calls('update_field')).toBe(before + 1);
    expect(toolMessages(outcome).map((message) => message.outcome)).toEqual(['denied', 'budget_exhausted', 'ok']);
    // The approved call used the budget up: the answer is the final-answer call's, as for any turn.
    expect(outcome.state.lastResult).toMatchObject({
      stopReason: 'budget:toolCalls',
      answer: 'Alan is on silver.',
      toolCalls: 1,
    });
  });
});
