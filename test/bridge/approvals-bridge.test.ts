import { describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { serveStreamingBridge } from '../../src/bridge/serve.js';
import type { ApprovalDecision } from '../../src/workflows/definitions.js';
import type { StreamEvent } from '../../src/workflows/stream-events.js';
import { poll } from '../client/helpers.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { toolResults } from '../helpers/transcript.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { readEvents } from './sse.js';

const bed = useTimeSkippingWithCrm();
let counter = 0;

const update = (userId: string, value: string) => ({
  name: 'crm__update_field',
  arguments: { userId, field: 'plan', value },
});
const calls = () => bed.crm.calls.update_field ?? 0;

/** A bridge over an agent whose CRM asks for approval of `update_field`, and a conversation that waits on it. */
async function waitingConversation(value: string) {
  const id = `bridge-approvals-${++counter}`;
  const agent = await bed.agentWith([{ toolCalls: [update('u-1', value)] }, { content: 'Done.' }], {
    mcpServers: [bed.crm.config('crm', { requireApproval: 'writes' })],
  });
  const client = new DurableAgentClient({ client: bed.env.client, taskQueue: agent.taskQueue });
  const served = await serveStreamingBridge({ agent: client, port: 0, keepAliveMs: 200 });
  bed.onCleanup(() => served.close());
  const events = readEvents(`${served.url}/conversations/${id}/events`, (message) => message.event === 'turn_finished');
  await client.send(id, `Set Ada's plan to ${value}.`);
  const [pending] = await poll(
    () => client.pendingApprovals(id),
    (list) => list.length === 1,
  );
  const decide = (body: unknown, callId = pending!.callId, conversationId = id) =>
    fetch(`${served.url}/conversations/${conversationId}/approvals/${callId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  return { id, agent, client, pending: pending!, events, decide };
}

describe('deciding over the HTTP bridge (POST /conversations/:id/approvals/:callId)', () => {
  it('approve (edited arguments, always) answers 200 with the decision and the call runs; both events go over SSE', async () => {
    const before = calls();
    const { pending, events, decide } = await waitingConversation('pro');
    const { conversationId: _conversationId, ...asked } = pending;
    const edited = { userId: 'u-1', field: 'plan', value: 'team' };
    const response = await decide({ decision: 'approve', arguments: edited, always: true, by: 'web:ada@example.com' });
    expect(response.status).toBe(200);
    const decision = (await response.json()) as ApprovalDecision;
    expect(decision).toMatchObject({
      callId: pending.callId,
      tool: 'crm__update_field',
      decision: 'approved',
      by: 'web:ada@example.com',
      turn: 1,
      arguments: edited,
      always: true,
    });

    const read = (await events).map((message) => ({
      event: message.event,
      data: JSON.parse(message.data) as StreamEvent,
    }));
    const approvals = read.filter((message) => message.event.startsWith('approval_'));
    expect(approvals).toMatchObject([
      { event: 'approval_requested', data: { type: 'approval_requested', ...asked } },
      { event: 'approval_decided', data: { type: 'approval_decided', ...decision } },
    ]);
    expect(read.at(-1)).toMatchObject({ event: 'turn_finished', data: { answer: 'Done.' } });
    expect(calls()).toBe(before + 1);
    // The edited arguments reached the server, not the model's.
    expect(bed.crm.records.get('u-1')).toMatchObject({ plan: 'team' });
  });

  it('deny answers 200 and the model gets the reason; refusals are JSON errors with 400, 404, 409', async () => {
    const before = calls();
    const { id, agent, client, pending, events, decide } = await waitingConversation('gold');
    const refused = async (response: Response, status: number, type: string) => {
      expect(response.status).toBe(status);
      const body = (await response.json()) as { error: { type: string; message: string } };
      expect(body.error.type).toBe(type);
      expect(body.error.message).not.toBe('');
      return body.error.message;
    };

    expect(await refused(await decide({ decision: 'approve' }, 'call_nope'), 404, 'UnknownApprovalError')).toContain(
      pending.callId,
    );
    await refused(
      await decide({ decision: 'approve' }, pending.callId, `${id}-missing`),
      404,
      'ConversationNotFoundError',
    );
    await refused(await decide('{"decision": '), 400, 'InvalidBody');
    await refused(await decide({ decision: 'maybe' }), 400, 'InvalidBody');
    await refused(await decide({ decision: 'approve', arguments: [1] }), 400, 'InvalidBody');
    await refused(await decide({ decision: 'approve', always: 'yes' }), 400, 'InvalidBody');
    expect(await refused(await decide({ decision: 'deny' }), 400, 'InvalidApprovalArgumentsError')).toMatch(/reason/);
    const schema = await refused(
      await decide({ decision: 'approve', arguments: { userId: 'u-1' } }),
      400,
      'InvalidApprovalArgumentsError',
    );
    expect(schema).toMatch(/input schema of crm__update_field/);
    // Nothing changed.
    expect(await client.pendingApprovals(id)).toEqual([pending]);

    const reason = 'Gold is not a plan we sell.';
    const denied = await decide({ decision: 'deny', reason, by: 'web:grace' });
    expect(denied.status).toBe(200);
    expect(await denied.json()).toMatchObject({ decision: 'denied', reason, by: 'web:grace' });
    await refused(await decide({ decision: 'approve' }), 409, 'ApprovalAlreadyDecidedError');

    await events;
    expect(calls()).toBe(before);
    const second = agent.model.requests.filter((entry) => entry.conversation === `conversation-${id}`)[1]!;
    expect(toolResults(second.messages)[0]!.content).toContain(reason);
  });
});

describe('a model call a cost budget holds, decided over the HTTP bridge', () => {
  it('is listed and streamed like a tool call; approve with maxCostUsd raises the limit, a bad raise is a 400', async () => {
    const id = `bridge-approvals-${++counter}`;
    const usage = { prompt_tokens: 1_000, completion_tokens: 100 };
    const agent = await bed.agentWith(
      [
        { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }], usage },
        { content: 'Ada is a customer.', usage },
      ],
      { workerOptions: { prices: new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } }) } },
    );
    const client = new DurableAgentClient({ client: bed.env.client, taskQueue: agent.taskQueue });
    const served = await serveStreamingBridge({ agent: client, port: 0, keepAliveMs: 200 });
    bed.onCleanup(() => served.close());
    const events = readEvents(
      `${served.url}/conversations/${id}/events`,
      (message) => message.event === 'turn_finished',
    );
    await client.send(id, 'Who is Ada?', { settings: { budget: { maxCostUsd: 0.001, onCostLimit: 'pause' } } });
    const [held] = await poll(
      () => client.pendingApprovals(id),
      (list) => list.length === 1,
    );
    expect(held).toMatchObject({ kind: 'budget', tool: 'budget:cost', arguments: { limitUsd: 0.001 } });
    const decide = (body: unknown) =>
      fetch(`${served.url}/conversations/${id}/approvals/${held!.callId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    const low = await decide({ decision: 'approve', maxCostUsd: 0.0005 });
    expect(low.status).toBe(400);
    expect(((await low.json()) as { error: { message: string } }).error.message).toContain('above the limit');
    expect((await decide({ decision: 'approve', maxCostUsd: 'lots' })).status).toBe(400);

    const response = await decide({ decision: 'approve', maxCostUsd: 0.01, by: 'web:ops' });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ decision: 'approved', maxCostUsd: 0.01, by: 'web:ops' });
    const read = (await events).map((message) => message.event);
    expect(read.filter((event) => event.startsWith('approval_'))).toEqual(['approval_requested', 'approval_decided']);
    expect((await client.status(id)).lastResult).toMatchObject({
      stopReason: 'completed',
      answer: 'Ada is a customer.',
    });
  });
});
