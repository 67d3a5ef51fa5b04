import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApprovalAlreadyDecidedError,
  ConversationEndedError,
  ConversationNotFoundError,
  DurableAgentClient,
  InvalidApprovalArgumentsError,
  UnknownApprovalError,
  type ConversationPendingApproval,
} from '../../src/client/index.js';
import { FailureType } from '../../src/shared/errors.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';
import { approveUpdate } from '../../src/workflows/definitions.js';
import { toolResults } from '../helpers/transcript.js';
import { poll, ScriptBook } from './helpers.js';

let env: TestWorkflowEnvironment;
let crm: Crm;
let agent: TestAgent;
let client: DurableAgentClient;
const book = new ScriptBook('approvals');

beforeAll(async () => {
  env = await createLocalEnvironment();
  crm = await startCrm();
  // Every CRM tool not annotated read-only (update_field) waits for a person.
  agent = await startTestAgent({
    env,
    script: book.script,
    mcpServers: [crm.config('crm', { requireApproval: 'writes' })],
  });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await crm?.close();
  await env?.teardown();
});

const update = (userId: string, value: string) => ({
  name: 'crm__update_field',
  arguments: { userId, field: 'plan', value },
});
const calls = () => crm.calls.update_field ?? 0;

/** Send `message` to a new conversation whose model asks for `call` and then answers `answer`; wait until it waits. */
async function waitingConversation(
  name: string,
  call: ReturnType<typeof update>,
  answer = 'Done.',
): Promise<{ id: string; pending: ConversationPendingApproval }> {
  const id = book.conversation(name, [{ toolCalls: [call] }, { content: answer }]);
  await client.send(id, `Please set ${call.arguments.userId}'s plan to ${call.arguments.value}.`);
  const [pending] = await poll(
    () => client.pendingApprovals(id),
    (list) => list.length === 1,
  );
  return { id, pending: pending! };
}

/** The error a promise rejects with (the test fails if it resolves). */
async function failure(promise: Promise<unknown>): Promise<Error> {
  return await promise.then(
    () => expect.fail('expected a refusal'),
    (error: unknown) => error as Error,
  );
}

const modelRequests = (id: string) =>
  agent.model.requests.filter((entry) => entry.conversation === `conversation-${id}`);

describe('deciding tool calls with DurableAgentClient', () => {
  it('pendingApprovals and listPendingApprovals show the waiting calls; approve runs the tool once, by whom', async () => {
    const before = calls();
    const first = await waitingConversation('approve', update('u-1', 'pro'));
    const second = await waitingConversation('other', update('u-2', 'team'));
    expect(first.pending).toMatchObject({
      conversationId: first.id,
      turn: 1,
      tool: 'crm__update_field',
      server: 'crm',
      arguments: { userId: 'u-1', field: 'plan', value: 'pro' },
    });
    expect(first.pending.reason).toMatch(/read-only/);
    expect(calls()).toBe(before);

    // Across conversations, through the search attribute (eventually consistent: polled).
    const all = await poll(
      () => client.listPendingApprovals(),
      (list) => [first.id, second.id].every((id) => list.some((entry) => entry.conversationId === id)),
    );
    expect(all.find((entry) => entry.conversationId === first.id)).toEqual(first.pending);
    expect(all.find((entry) => entry.conversationId === second.id)).toEqual(second.pending);

    const decision = await client.approve(first.id, first.pending.callId, { by: 'ops@example.com' });
    expect(decision).toMatchObject({
      callId: first.pending.callId,
      turn: 1,
      tool: 'crm__update_field',
      decision: 'approved',
      by: 'ops@example.com',
    });
    expect(Date.parse(decision.decidedAt)).toBeGreaterThanOrEqual(Date.parse(first.pending.requestedAt));
    const status = await poll(
      () => client.status(first.id),
      (current) => current.phase === 'idle' && current.turns === 1,
    );
    expect(status.lastResult).toMatchObject({ stopReason: 'completed', answer: 'Done.', toolCalls: 1 });
    expect(status.pendingApprovals).toBeUndefined();
    expect(calls()).toBe(before + 1);
    expect(crm.records.get('u-1')).toMatchObject({ plan: 'pro' });
    expect(await client.pendingApprovals(first.id)).toEqual([]);

    // A second decision on the same call is refused, and changes nothing.
    const again = await failure(client.deny(first.id, first.pending.callId, { reason: 'too late' }));
    expect(again).toBeInstanceOf(ApprovalAlreadyDecidedError);
    expect(again.message).toContain(first.pending.callId);
    expect(calls()).toBe(before + 1);

    await client.deny(second.id, second.pending.callId, { reason: 'Not today.' });
    await poll(
      () => client.listPendingApprovals(),
      (list) => !list.some((entry) => [first.id, second.id].includes(entry.conversationId)),
    );
  });

  it('deny sends the reason to the model; the tool does not run', async () => {
    const before = calls();
    const { id, pending } = await waitingConversation('deny', update('u-1', 'enterprise'), 'I left the plan alone.');
    const reason = 'Enterprise plans need a signed contract first.';
    const decision = await client.deny(id, pending.callId, { reason, by: 'Grace' });
    expect(decision).toMatchObject({ decision: 'denied', reason, by: 'Grace' });
    await poll(
      () => client.status(id),
      (current) => current.phase === 'idle' && current.turns === 1,
    );
    expect(calls()).toBe(before);
    const [result] = toolResults(modelRequests(id)[1]!.messages);
    expect(result).toMatchObject({ id: pending.callId });
    expect(result!.content).toContain(reason);
  });

  it('edited arguments are checked against the schema (refused: nothing changes), then reach the server', async () => {
    const { id, pending } = await waitingConversation('edit', update('u-2', 'pro'));
    const invalid = await failure(client.approve(id, pending.callId, { arguments: { userId: 'u-2', field: 'plan' } }));
    expect(invalid).toBeInstanceOf(InvalidApprovalArgumentsError);
    expect(invalid.message).toMatch(/value/);
    expect(await client.pendingApprovals(id)).toEqual([pending]);

    await client.approve(id, pending.callId, { arguments: { userId: 'u-2', field: 'plan', value: 'basic' } });
    await poll(
      () => client.status(id),
      (current) => current.phase === 'idle' && current.turns === 1,
    );
    expect(crm.records.get('u-2')).toMatchObject({ plan: 'basic' });
  });

  it('refuses an unknown call id, a blank reason, an unknown or ended conversation with named errors', async () => {
    const { id, pending } = await waitingConversation('refused', update('u-1', 'basic'));

    const unknown = await failure(client.approve(id, 'call_does_not_exist'));
    expect(unknown).toBeInstanceOf(UnknownApprovalError);
    expect(unknown).toMatchObject({ conversationId: id, callId: 'call_does_not_exist' });
    // It names the call that does wait, and where to look.
    expect(unknown.message).toContain(pending.callId);
    expect(unknown.message).toContain(`durable-agent approvals -c ${id}`);

    const blank = await failure(client.deny(id, pending.callId, { reason: '  ' }));
    expect(blank).toBeInstanceOf(InvalidApprovalArgumentsError);
    expect(blank.message).toMatch(/reason/);

    const nowhere = await failure(client.approve(`${id}-missing`, pending.callId));
    expect(nowhere).toBeInstanceOf(ConversationNotFoundError);
    expect(await failure(client.pendingApprovals(`${id}-missing`))).toBeInstanceOf(ConversationNotFoundError);

    expect(await client.pendingApprovals(id)).toEqual([pending]);
    await client.approve(id, pending.callId);

    // Once the conversation has ended, a decision says so.
    await client.end(id);
    await poll(
      () => client.status(id),
      (status) => !status.open,
    );
    expect(await failure(client.approve(id, pending.callId))).toBeInstanceOf(ConversationEndedError);
    expect(await client.pendingApprovals(id)).toEqual([]);
  });

  it('a decision retried with the same update id returns the first decision; a new update id is AlreadyDecided', async () => {
    const before = calls();
    const { id, pending } = await waitingConversation('retried', update('u-3', 'pro'));
    const handle = env.client.workflow.getHandle(`conversation-${id}`);
    const request = { callId: pending.callId, by: 'ops' };
    const first = await handle.executeUpdate(approveUpdate, { args: [request], updateId: 'decision-1' });
    // A retry of the same call (its response was lost): Temporal answers it from the run's history.
    const retried = await handle.executeUpdate(approveUpdate, { args: [request], updateId: 'decision-1' });
    expect(retried).toEqual(first);
    expect(first).toMatchObject({ callId: pending.callId, decision: 'approved', by: 'ops' });
    // Another update (the TypeScript client gives each call its own id) is a second decision: refused.
    const again = await handle
      .executeUpdate(approveUpdate, { args: [request], updateId: 'decision-2' })
      .catch((error: unknown) => error as WorkflowUpdateFailedError);
    expect(again).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((again as WorkflowUpdateFailedError).cause).toMatchObject({ type: FailureType.AlreadyDecided });
    await poll(
      () => client.status(id),
      (current) => current.phase === 'idle' && current.turns === 1,
    );
    expect(calls() - before).toBe(1);
    await client.end(id);
  });
});
