import { readFileSync } from 'node:fs';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { CONVERSATION_QUERIES } from '../../src/client/list.js';
import { PriceTable } from '../../src/worker/pricing/price-table.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import {
  approveUpdate,
  conversationWorkflowId,
  statusQuery,
  userMessageSignal,
  type IncomingMessage,
} from '../../src/workflows/definitions.js';
import { startCrm } from '../helpers/crm-server.js';
import { poll, ScriptBook } from './helpers.js';

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let client: DurableAgentClient;
const book = new ScriptBook('list');

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script: book.script });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

/** Workflow ids a visibility query lists (one entry per run it matches), sorted. */
async function listed(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of env.client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}

describe('listing conversations', () => {
  it('the queries of docs/protocol.md and list() give each conversation once, in one state, whatever its runs', async () => {
    const doc = readFileSync(new URL('../../docs/protocol.md', import.meta.url), 'utf8');
    for (const query of Object.values(CONVERSATION_QUERIES)) expect(doc).toContain(query);

    const long = { idleTimeoutMs: 10 * 60_000 };
    // Continued as new twice: three runs, the first two closed as idle.
    const continued = book.conversation('continued', [{ content: 'a' }, { content: 'b' }, { content: 'c' }]);
    for (const question of ['one', 'two', 'three']) {
      await client.ask(continued, question, { settings: { ...long, maxTurnsPerRun: 1 } });
    }
    // Closed idle, then reopened: two runs, both `idle`, one of them closed.
    const reopened = book.conversation('reopened', [{ content: 'a' }, { content: 'b' }]);
    await client.ask(reopened, 'one', { settings: { idleTimeoutMs: 1_000 } });
    await poll(
      () => client.status(reopened),
      (status) => !status.open,
    );
    await client.ask(reopened, 'two', { settings: long });
    // Closed idle and not reopened: listed by list() as idle; not open, so in none of the open queries.
    const closed = book.conversation('closed', [{ content: 'a' }]);
    await client.ask(closed, 'one', { settings: { idleTimeoutMs: 1_000 } });
    // Ended, then hit by a signal-with-start with Temporal's default reuse policy (which reopens nothing).
    const ended = book.conversation('ended', [{ content: 'a' }, { content: 'never asked' }]);
    await client.ask(ended, 'one');
    await client.end(ended);
    await poll(
      () => client.status(ended),
      (status) => !status.open,
    );
    await env.client.workflow.signalWithStart('conversationWorkflow', {
      taskQueue: agent.taskQueue,
      workflowId: conversationWorkflowId(ended),
      args: [{ conversationId: ended }],
      signal: userMessageSignal,
      signalArgs: [{ id: 'late', content: 'Anyone?' } satisfies IncomingMessage],
    });
    // Answering a slow turn.
    const running = book.conversation('running', [{ content: 'slow', delayMs: 30_000 }]);
    await client.send(running, 'one', { settings: long });
    await poll(
      () => client.status(closed),
      (status) => !status.open,
    );

    const ours = [continued, reopened, closed, ended, running];
    const mine = `DurableAgentConversationId IN (${ours.map((id) => `'${id}'`).join(', ')})`;
    const workflowIds = (...ids: string[]) => ids.map(conversationWorkflowId).sort();
    const expected = {
      idle: workflowIds(continued, reopened),
      running: workflowIds(running),
      ended: workflowIds(ended),
    };
    await poll(
      async () => ({
        idle: await listed(`${CONVERSATION_QUERIES.idle} AND ${mine}`),
        running: await listed(`${CONVERSATION_QUERIES.running} AND ${mine}`),
        ended: await listed(`${CONVERSATION_QUERIES.ended} AND ${mine}`),
      }),
      (found) => JSON.stringify(found) === JSON.stringify(expected),
      { attempts: 50 },
    );
    // The runs behind them: more than one per conversation for two of them.
    expect((await listed(mine)).filter((id) => id !== conversationWorkflowId(running)).length).toBeGreaterThan(6);

    const all = await client.list({ query: mine });
    expect(Object.fromEntries(all.map((summary) => [summary.conversationId, [summary.status, summary.open]]))).toEqual({
      [continued]: ['idle', true],
      [reopened]: ['idle', true],
      [closed]: ['idle', false],
      [ended]: ['ended', false],
      [running]: ['running', true],
    });
    const ids = async (status: 'idle' | 'running' | 'ended') =>
      (await client.list({ status, query: mine })).map((summary) => summary.conversationId).sort();
    expect(await ids('idle')).toEqual([continued, reopened, closed].sort());
    expect(await ids('running')).toEqual([running]);
    expect(await ids('ended')).toEqual([ended]);

    await client.interrupt(running);
    for (const id of [continued, reopened, running]) await client.end(id);
  });
});

describe('listing what conversations cost', () => {
  it('list: each conversation shows what its model calls cost so far, carried across continue-as-new', async () => {
    const prices = new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } });
    const priced = await startTestAgent({ env, script: book.script, workerOptions: { prices } });
    try {
      const pricedClient = new DurableAgentClient({ client: env.client, taskQueue: priced.taskQueue });
      // $0.001 of input and $0.001 of output, then $0.002 of input: $0.004, the second turn in a run of its own.
      const costly = book.conversation('costly', [
        { content: 'a', usage: { prompt_tokens: 1_000, completion_tokens: 500 } },
        { content: 'b', usage: { prompt_tokens: 2_000, completion_tokens: 0 } },
      ]);
      await pricedClient.ask(costly, 'one', { settings: { maxTurnsPerRun: 1 } });
      await pricedClient.ask(costly, 'two');
      const free = book.conversation('uncounted', [{ content: 'a' }]);
      await client.ask(free, 'one');

      const mine = `DurableAgentConversationId IN ('${costly}', '${free}')`;
      const costs = await poll(
        async () =>
          Object.fromEntries((await client.list({ query: mine })).map((entry) => [entry.conversationId, entry.cost])),
        (found) => Math.abs((found[costly]?.usd ?? 0) - 0.004) < 1e-12 && free in found,
        { attempts: 100 },
      );
      // The default worker has no price for the scripted model: no cost is shown, rather than a cost of zero.
      expect(costs[free]).toBeUndefined();
      expect(costs[costly]?.unpricedCalls).toBeUndefined();
      for (const id of [costly, free]) await client.end(id);
    } finally {
      await priced.close();
    }
  });
});

describe('listing conversations that wait for a person', () => {
  it('list --status awaiting_approval finds a conversation while a tool call awaits approval, and not after', async () => {
    const crm = await startCrm();
    const approving = await startTestAgent({
      env,
      script: book.script,
      mcpServers: [crm.config('crm', { requireApproval: 'writes' })],
    });
    try {
      const approvals = new DurableAgentClient({ client: env.client, taskQueue: approving.taskQueue });
      const waiting = book.conversation('waiting', [
        { toolCalls: [{ name: 'crm__update_field', arguments: { userId: 'u-1', field: 'plan', value: 'pro' } }] },
        { content: 'Upgraded.' },
      ]);
      await approvals.send(waiting, 'Upgrade Ada.');
      const mine = `DurableAgentConversationId = '${waiting}'`;
      const ids = async (status: 'running' | 'awaiting_approval' | 'idle') =>
        (await approvals.list({ status, query: mine })).map((summary) => summary.conversationId);
      await poll(
        () => ids('awaiting_approval'),
        (found) => found.length === 1,
        { attempts: 50 },
      );
      expect(await listed(`${CONVERSATION_QUERIES.awaiting_approval} AND ${mine}`)).toEqual([
        conversationWorkflowId(waiting),
      ]);
      expect(await ids('running')).toEqual([]);
      expect((await approvals.list({ query: mine }))[0]).toMatchObject({ status: 'awaiting_approval', open: true });

      const handle = env.client.workflow.getHandle(conversationWorkflowId(waiting));
      const [pending] = (await handle.query(statusQuery)).pendingApprovals!;
      await handle.executeUpdate(approveUpdate, { args: [{ callId: pending!.callId, by: 'ops' }] });
      await poll(
        () => ids('idle'),
        (found) => found.length === 1,
        { attempts: 50 },
      );
      expect(await ids('awaiting_approval')).toEqual([]);
      expect(crm.calls.update_field).toBe(1);
      await approvals.end(waiting);
    } finally {
      await approving.close();
      await crm.close();
    }
  });
});
