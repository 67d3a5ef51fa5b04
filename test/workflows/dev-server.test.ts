import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import type { ChatMessage } from '../../src/shared/types.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { askUpdate, transcriptQuery, userMessageSignal, type TurnResult } from '../../src/workflows/definitions.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';

/** Temporal suggests continue-as-new after this many history events (4,096 by default; low to see it here). */
const SUGGEST_AFTER_EVENTS = 80;

let env: TestWorkflowEnvironment;
let crm: Crm;
let agent: TestAgent;

beforeAll(async () => {
  env = await createLocalEnvironment({
    extraArgs: ['--dynamic-config-value', `limit.historyCount.suggestContinueAsNew=${SUGGEST_AFTER_EVENTS}`],
  });
  crm = await startCrm();
  agent = await startTestAgent({
    env,
    mcpServers: [crm.config()],
    // Every turn: look a user up, then answer with the turn's number (taken from the question).
    script: (request, { stepIndex }) => {
      const question = [...request.messages].reverse().find((message) => message.role === 'user');
      const text = typeof question?.content === 'string' ? question.content : '';
      return stepIndex % 2 === 0
        ? { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] }
        : { content: `answer to ${text}` };
    },
  });
});

afterAll(async () => {
  await agent?.close();
  await crm?.close();
  await env?.teardown();
});

type Conversation = typeof conversationWorkflow;

async function askWithRetry(workflowId: string, message: { id: string; content: string }): Promise<TurnResult> {
  const handle = env.client.workflow.getHandle<Conversation>(workflowId);
  for (let attempt = 0; ; attempt++) {
    try {
      return await handle.executeUpdate(askUpdate, { args: [message] });
    } catch (error) {
      const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
      const rollingOver = cause instanceof ApplicationFailure && cause.type === FailureType.ConversationRollingOver;
      if (!rollingOver || attempt > 100) throw error;
      await sleep(100);
    }
  }
}

/** The whole conversation: each run's own messages, following the chain of continued runs back to the first. */
async function wholeTranscript(workflowId: string): Promise<ChatMessage[]> {
  const runs: ChatMessage[][] = [];
  let runId: string | undefined;
  let end = Number.POSITIVE_INFINITY;
  for (;;) {
    const handle = env.client.workflow.getHandle<Conversation>(workflowId, runId);
    const first = await handle.query(transcriptQuery, { from: 0, limit: 1 });
    const messages: ChatMessage[] = [];
    for (let from = first.offset; from < Math.min(first.total, end);) {
      const page = await handle.query(transcriptQuery, { from, limit: 100 });
      messages.push(...page.messages.slice(0, Math.min(first.total, end) - from));
      from += page.messages.length;
    }
    runs.unshift(messages.filter((message) => message.role !== 'system'));
    end = first.offset;
    if (first.previousRunId === undefined || first.offset === 0) break;
    runId = first.previousRunId;
  }
  return runs.flat();
}

describe('a long conversation on the dev server', () => {
  it('continues as new when Temporal suggests it, without losing or repeating a message', async () => {
    const workflowId = (await agent.startConversation('long-running')).workflowId;
    const turns = 12;
    for (let index = 1; index < turns; index++) {
      // Most messages arrive by signal, as from a backend that does not wait; each is answered in order.
      await env.client.workflow
        .getHandle<Conversation>(workflowId)
        .signal(userMessageSignal, { id: `m-${index}`, content: `question ${index}` });
      if (index % 4 === 0) await askWithRetry(workflowId, { id: `m-${index}-ask`, content: `checkpoint ${index}` });
    }
    const last = await askWithRetry(workflowId, { id: 'last', content: 'last question' });
    expect(last.answer).toBe('answer to last question');

    const runs: string[] = [];
    for await (const execution of env.client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
      runs.push(execution.runId);
    }
    expect(runs.length).toBeGreaterThan(1);

    const users = (await wholeTranscript(workflowId)).filter((message) => message.role === 'user');
    const expected = [];
    for (let index = 1; index < turns; index++) {
      expected.push(`question ${index}`);
      if (index % 4 === 0) expected.push(`checkpoint ${index}`);
    }
    expected.push('last question');
    expect(users.map((message) => message.content)).toEqual(expected);
  });

  it('search attributes tell the status, turns and conversation id, and filter a list', async () => {
    const handle = await agent.startConversation('searchable');
    await handle.executeUpdate(askUpdate, { args: [{ id: 'hello', content: 'hello' }] });
    let found: string[] = [];
    for (let attempt = 0; attempt < 100 && found.length === 0; attempt++) {
      found = [];
      const query =
        'DurableAgentConversationId = "searchable" AND DurableAgentStatus = "idle" AND DurableAgentTurns >= 1';
      for await (const execution of env.client.workflow.list({ query })) found.push(execution.workflowId);
      if (found.length === 0) await sleep(200);
    }
    expect(found).toEqual([handle.workflowId]);
  });

  it('search attributes are upserted only when they change: running, then idle, for a one-shot turn', async () => {
    const handle = await agent.startConversation('one-upsert-per-change', {
      messages: [{ id: 'only', content: 'find Ada' }],
      closeWhenIdle: true,
    });
    await handle.result();
    const history = await handle.fetchHistory();
    const upserts = (history.events ?? [])
      .filter(
        (event) => event.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES,
      )
      .map((event) => {
        const fields = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields ?? {};
        return Object.fromEntries(
          Object.entries(fields).map(([key, payload]) => [key, JSON.parse(Buffer.from(payload.data!).toString())]),
        );
      });
    // No 'idle' before the first turn (it starts in the same workflow task), none repeated when the run closes.
    expect(upserts).toEqual([
      { DurableAgentStatus: 'running', DurableAgentTurns: 1, DurableAgentConversationId: 'one-upsert-per-change' },
      { DurableAgentStatus: 'idle', DurableAgentTurns: 1 },
    ]);
  });

  it('the Web UI shows a summary on every model and tool call', async () => {
    const handle = await agent.startConversation('summaries');
    await handle.executeUpdate(askUpdate, { args: [{ id: 'q', content: 'find Ada' }] });
    const history = await handle.fetchHistory();
    const summaries = (history.events ?? [])
      .filter((event) => event.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      .map((event) => {
        const payload = event.userMetadata?.summary;
        return payload?.data ? (JSON.parse(Buffer.from(payload.data).toString('utf8')) as string) : undefined;
      });
    expect(summaries).toEqual([
      // The first call lists the tools too; the worker's default model is known from its result on.
      'turn 1 · model default · round 1 · lists tools',
      'turn 1 · tool crm__find_user',
      'turn 1 · model scripted-model · round 2',
    ]);
  });
});
