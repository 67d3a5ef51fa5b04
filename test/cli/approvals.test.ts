import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient, type ConversationPendingApproval } from '../../src/client/index.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import type { TestAgent } from '../../src/testing/agent.js';
import type { ApprovalDecision } from '../../src/workflows/definitions.js';
import { poll, ScriptBook } from '../client/helpers.js';
import type { Crm } from '../helpers/crm-server.js';
import { toolResults } from '../helpers/transcript.js';
import { killAll, runCli } from './helpers.js';
import { type CliAgent, startCliAgent } from './cli-agent.js';

let crm: Crm;
let agent: TestAgent;
let client: DurableAgentClient;
let cliEnv: NodeJS.ProcessEnv;
let cliAgent: CliAgent | undefined;
const book = new ScriptBook('cli-approvals');

beforeAll(async () => {
  cliAgent = await startCliAgent({ script: book.script, crm: { requireApproval: 'writes' } });
  ({ crm, agent, client, cliEnv } = cliAgent);
});

afterEach(killAll);

afterAll(async () => {
  await cliAgent?.close();
});

const cli = (...args: string[]) => runCli(args, cliEnv);
const update = (userId: string, value: string) => ({
  name: 'crm__update_field',
  arguments: { userId, field: 'plan', value },
});
const calls = () => crm.calls.update_field ?? 0;

/** A conversation whose model asks for `steps`' calls; sent its first message, waiting for a decision. */
async function waiting(
  name: string,
  steps: Parameters<ScriptBook['conversation']>[1],
): Promise<{ id: string; pending: ConversationPendingApproval }> {
  const id = book.conversation(name, steps);
  await client.send(id, 'Change the plan, please.');
  const [pending] = await poll(
    () => client.pendingApprovals(id),
    (list) => list.length === 1,
  );
  return { id, pending: pending! };
}

const idle = (id: string) =>
  poll(
    () => client.status(id),
    (status) => status.phase === 'idle',
  );

describe('durable-agent approvals, approve, deny', () => {
  it('approvals lists the waiting call (and list --status awaiting_approval the conversation); approve runs it', async () => {
    const before = calls();
    const { id, pending } = await waiting('approve', [{ toolCalls: [update('u-1', 'pro')] }, { content: 'Done.' }]);

    const listed = await poll(
      () => cli('list', '--status', 'awaiting_approval', '--json'),
      (run) => run.stdout.includes(`"${id}"`),
    );
    expect(listed.code).toBe(ExitCode.Ok);
    expect(JSON.parse(listed.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ conversationId: id, status: 'awaiting_approval' })]),
    );

    const table = await poll(
      () => cli('approvals'),
      (run) => run.stdout.includes(pending.callId),
    );
    expect(table.code).toBe(ExitCode.Ok);
    const [header, ...rows] = table.stdout.split('\n');
    expect(header).toMatch(/^CONVERSATION +CALL ID +TOOL +ARGUMENTS +WHY +WAITING SINCE$/);
    const row = rows.find((line) => line.includes(pending.callId))!;
    expect(row).toContain(id);
    expect(row).toContain('crm__update_field');
    expect(row).toContain('{"userId":"u-1","field":"plan","value":"pro"}');
    expect(row).toContain(pending.reason);
    expect(row).toContain(pending.requestedAt.slice(0, 19));
    expect(table.stdout).toContain(`durable-agent approve -c ${id} ${pending.callId}`);

    const json = await cli('approvals', '-c', id, '--json');
    expect(JSON.parse(json.stdout)).toEqual([pending]);
    expect(calls()).toBe(before);

    const approved = await cli('approve', '-c', id, pending.callId, '--by', 'ops@example.com');
    expect(approved).toMatchObject({ code: ExitCode.Ok, stderr: '' });
    expect(approved.stdout).toContain(
      `Approved crm__update_field (${pending.callId}) in conversation ${id}: it runs now`,
    );
    const status = await idle(id);
    expect(status.lastResult).toMatchObject({ answer: 'Done.', toolCalls: 1 });
    expect(calls()).toBe(before + 1);
    expect(crm.records.get('u-1')).toMatchObject({ plan: 'pro' });
    expect((await cli('approvals', '-c', id)).stdout).toBe(`No tool call waits in conversation ${id}.\n`);

    // Decided already: refused with its own exit code, nothing changes.
    const again = await cli('approve', '-c', id, pending.callId);
    expect(again.code).toBe(ExitCode.AlreadyDecided);
    expect(again.stderr).toMatch(/was decided already/);
    expect(calls()).toBe(before + 1);
  });

  it('deny sends the reason to the model (by the login name unless --by says otherwise); the tool does not run', async () => {
    const before = calls();
    const { id, pending } = await waiting('deny', [{ toolCalls: [update('u-1', 'gold')] }, { content: 'Left it.' }]);
    const reason = 'Gold is not a plan we sell.';
    const denied = await cli('deny', '-c', id, pending.callId, '--reason', reason, '--json');
    expect(denied.code).toBe(ExitCode.Ok);
    const decision = JSON.parse(denied.stdout) as ApprovalDecision & { conversationId: string };
    expect(decision).toMatchObject({ conversationId: id, callId: pending.callId, decision: 'denied', reason });
    expect(decision.by).toBeTruthy();
    await idle(id);
    expect(calls()).toBe(before);
    const request = agent.model.requests.filter((entry) => entry.conversation === `conversation-${id}`)[1]!;
    expect(toolResults(request.messages)[0]!.content).toContain(reason);
  });

  it('approve --arguments runs the edited call; --always lets the next call of the tool through', async () => {
    const { id, pending } = await waiting('always', [
      { toolCalls: [update('u-2', 'pro')] },
      { toolCalls: [update('u-2', 'team')] },
      { content: 'Both done.' },
    ]);
    const edited = JSON.stringify({ userId: 'u-2', field: 'plan', value: 'basic' });
    const approved = await cli('approve', '-c', id, pending.callId, '--arguments', edited, '--always', '--json');
    expect(approved.code).toBe(ExitCode.Ok);
    expect(JSON.parse(approved.stdout)).toMatchObject({
      decision: 'approved',
      always: true,
      arguments: { userId: 'u-2', field: 'plan', value: 'basic' },
    });
    // The second call of the same tool does not wait.
    const status = await idle(id);
    expect(status.lastResult).toMatchObject({ answer: 'Both done.', toolCalls: 2 });
    expect(crm.records.get('u-2')).toMatchObject({ plan: 'team' });
    const first = agent.model.requests.filter((entry) => entry.conversation === `conversation-${id}`)[1]!;
    expect(toolResults(first.messages)[0]!.content).toContain('basic');
  });

  it('refuses an unknown call id (3), bad --arguments (2), a missing --reason (2), an unknown conversation (3)', async () => {
    const { id, pending } = await waiting('refused', [{ toolCalls: [update('u-1', 'basic')] }, { content: 'Ok.' }]);

    const unknown = await cli('approve', '-c', id, 'call_nope');
    expect(unknown.code).toBe(ExitCode.NotFound);
    expect(unknown.stderr).toMatch(/No tool call call_nope waits for approval/);
    expect(unknown.stderr).toContain(pending.callId);

    const notJson = await cli('approve', '-c', id, pending.callId, '--arguments', '{"userId": ');
    expect(notJson.code).toBe(ExitCode.Usage);
    expect(notJson.stderr).toMatch(/--arguments.*expected a JSON object/);

    const wrongShape = await cli('approve', '-c', id, pending.callId, '--arguments', '{"userId": "u-1"}');
    expect(wrongShape.code).toBe(ExitCode.Usage);
    expect(wrongShape.stderr).toMatch(/do not match the input schema of crm__update_field/);

    const noReason = await cli('deny', '-c', id, pending.callId);
    expect(noReason.code).toBe(ExitCode.Usage);
    expect(noReason.stderr).toMatch(/--reason/);

    const nowhere = await cli('approve', '-c', `${id}-missing`, pending.callId);
    expect(nowhere.code).toBe(ExitCode.NotFound);
    expect(nowhere.stderr).toMatch(/does not exist/);

    // Nothing changed: the call still waits, and can still be decided.
    expect(await client.pendingApprovals(id)).toEqual([pending]);
    expect((await cli('approve', '-c', id, pending.callId)).code).toBe(ExitCode.Ok);
    await idle(id);
  });

  it('a model call a cost budget holds: approvals lists it, approve --max-cost-usd raises the limit (a bad one exits 2)', async () => {
    // gpt-4o-mini has a price in the package's table: 1,000 input and 100 output tokens cost $0.00021.
    const usage = { prompt_tokens: 1_000, completion_tokens: 100 };
    const id = book.conversation('budget', [
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }], usage },
      { content: 'Ada is a customer.', usage },
    ]);
    await client.send(id, 'Who is Ada?', {
      settings: { model: 'gpt-4o-mini', budget: { maxCostUsd: 0.0002, onCostLimit: 'pause' } },
    });
    const [held] = await poll(
      () => client.pendingApprovals(id),
      (list) => list.length === 1,
    );
    expect(held).toMatchObject({ kind: 'budget', tool: 'budget:cost' });
    const listed = await cli('approvals', '-c', id);
    expect(listed.stdout).toContain(held!.callId);
    expect(listed.stdout).toContain('budget:cost');

    const notUsd = await cli('approve', '-c', id, held!.callId, '--max-cost-usd', 'lots');
    expect(notUsd.code).toBe(ExitCode.Usage);
    expect(notUsd.stderr).toMatch(/--max-cost-usd.*expected a number of US dollars above 0/);
    const lower = await cli('approve', '-c', id, held!.callId, '--max-cost-usd', '0.0001');
    expect(lower.code).toBe(ExitCode.Usage);
    expect(lower.stderr).toMatch(/above the limit that held the call/);

    const approved = await cli('approve', '-c', id, held!.callId, '--max-cost-usd', '0.01');
    expect(approved.code).toBe(ExitCode.Ok);
    expect(approved.stdout).toContain('it goes on, with the limit raised to $0.01');
    const status = await idle(id);
    expect(status.lastResult).toMatchObject({ stopReason: 'completed', answer: 'Ada is a customer.' });
  });
});
