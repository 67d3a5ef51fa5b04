import { WithStartWorkflowOperation, WorkflowUpdateFailedError, type WorkflowIdReusePolicy } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationEndedError, DurableAgentClient } from '../../src/client/index.js';
import { FailureType } from '../../src/shared/errors.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import {
  askUpdate,
  conversationWorkflowId,
  type ConversationInput,
  type IncomingMessage,
  type TurnResult,
  userMessageSignal,
} from '../../src/workflows/definitions.js';
import { poll, ScriptBook } from '../client/helpers.js';

/**
 * The lifecycle as a backend in another language drives it: raw signal-with-start and update-with-start, sometimes
 * with Temporal's default id reuse policy (ALLOW_DUPLICATE) where the protocol asks for another. On the dev server,
 * because a run looks for the earlier runs of its id in visibility, which the time-skipping server does not have.
 */

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let client: DurableAgentClient;
const book = new ScriptBook('lifecycle');

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script: book.script });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

type Conversation = typeof conversationWorkflow;

/** What a backend that knows only Temporal sends: a signal-with-start, with the given reuse policy (default Temporal's). */
async function signalWithStart(input: ConversationInput, message: IncomingMessage, reuse?: WorkflowIdReusePolicy) {
  return await env.client.workflow.signalWithStart<Conversation, [IncomingMessage]>('conversationWorkflow', {
    taskQueue: agent.taskQueue,
    workflowId: conversationWorkflowId(input.conversationId),
    args: [input],
    signal: userMessageSignal,
    signalArgs: [message],
    ...(reuse ? { workflowIdReusePolicy: reuse } : {}),
  });
}

/** An update-with-start `ask`, with the given reuse policy (default Temporal's). */
async function askWithStart(
  input: ConversationInput,
  message: IncomingMessage,
  reuse?: WorkflowIdReusePolicy,
): Promise<TurnResult> {
  return await env.client.workflow.executeUpdateWithStart(askUpdate, {
    args: [message],
    updateId: message.id,
    startWorkflowOperation: new WithStartWorkflowOperation<Conversation>('conversationWorkflow', {
      taskQueue: agent.taskQueue,
      workflowId: conversationWorkflowId(input.conversationId),
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...(reuse ? { workflowIdReusePolicy: reuse } : {}),
    }),
  });
}

function failureType(error: unknown): string | undefined {
  const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
  return cause instanceof ApplicationFailure ? (cause.type ?? undefined) : undefined;
}

/** The latest run, once it is closed and is not `runId`. */
async function closedAfter(conversationId: string, runId: string) {
  return await poll(
    () => env.client.workflow.getHandle(conversationWorkflowId(conversationId)).describe(),
    (description) => description.runId !== runId && description.status.name === 'COMPLETED',
  );
}

const contents = (messages: { role: string; content: string | null }[]) =>
  messages.map((message) => `${message.role}: ${message.content ?? ''}`);

const requestsOf = (conversationId: string) =>
  agent.model.requests.filter((request) => request.conversation === conversationWorkflowId(conversationId));

describe('a run started over closed runs of its conversation, without their state', () => {
  it("signal-with-start with Temporal's default reuse policy on an ended conversation loses nothing and answers nothing", async () => {
    const id = book.conversation('ended', [{ content: 'Goodbye.' }, { content: 'never asked' }]);
    await client.ask(id, 'Last question.', { messageId: 'q-1', settings: { systemPrompt: 'Be brief.' } });
    await client.end(id);
    const ended = await poll(
      () => client.status(id),
      (status) => !status.open && status.phase === 'ended',
    );

    const started = await signalWithStart({ conversationId: id }, { id: 'q-2', content: 'Are you there?' });
    await closedAfter(id, started.signaledRunId);

    // The conversation is still the ended one: its transcript, turns and last result, and nothing was answered.
    expect(await client.status(id)).toMatchObject({
      phase: 'ended',
      open: false,
      turns: 1,
      lastResult: ended.lastResult,
    });
    expect(contents(await client.fullTranscript(id))).toEqual([
      'system: Be brief.',
      'user: Last question.',
      'assistant: Goodbye.',
    ]);
    expect(requestsOf(id)).toHaveLength(1);

    // An ask that also leaves the default policy is told the conversation ended, not answered by an empty one.
    const asked = await askWithStart({ conversationId: id }, { id: 'q-3', content: 'Hello?' }).catch(
      (error: unknown) => error,
    );
    expect(failureType(asked)).toBe(FailureType.ConversationEnded);
    await expect(client.ask(id, 'And now?')).rejects.toBeInstanceOf(ConversationEndedError);
    expect(requestsOf(id)).toHaveLength(1);
    expect((await client.status(id)).turns).toBe(1);
  });

  it('signal-with-start with the default reuse policy on a conversation closed idle reopens it with its transcript, message ids and settings', async () => {
    const id = book.conversation('idle', [{ content: 'I will remember 42.' }, { content: 'You said 42.' }]);
    const settings = { idleTimeoutMs: 1_500, systemPrompt: 'Be brief.' };
    await client.ask(id, 'Remember 42.', { messageId: 'q-1', settings });
    const closed = await poll(
      () => client.status(id),
      (status) => !status.open,
    );

    // A message sent before (same id) is still remembered; a new one is answered with the whole conversation.
    await signalWithStart({ conversationId: id }, { id: 'q-1', content: 'Remember 42.' });
    await signalWithStart({ conversationId: id }, { id: 'q-2', content: 'What number?' });
    const reopened = await poll(
      () => client.status(id),
      (status) => status.turns === 2 && status.phase === 'idle',
    );
    expect(reopened.lastResult).toMatchObject({ messageId: 'q-2', answer: 'You said 42.' });
    expect(
      requestsOf(id)
        .at(-1)
        ?.messages.map((message) => message.content),
    ).toEqual(['Be brief.', 'Remember 42.', 'I will remember 42.', 'What number?']);
    expect(reopened.runId).not.toBe(closed.runId);
    // The reopened run has the first run's settings: its idle timeout closes it again.
    await poll(
      () => client.status(id),
      (status) => !status.open && status.turns === 2,
    );
  });

  it('update-with-start with the default reuse policy on a conversation closed idle: asked again with the same id, the reopened run answers', async () => {
    const id = book.conversation('idle-ask', [{ content: 'First.' }, { content: 'Second, with memory.' }]);
    await client.ask(id, 'One.', { settings: { idleTimeoutMs: 1_000 } });
    const closed = await poll(
      () => client.status(id),
      (status) => !status.open,
    );

    const question = { id: 'q-2', content: 'Two.' };
    // The run this starts hands over to the reopened one: the ask is carried there and fails as rolling over here.
    const first = await askWithStart({ conversationId: id }, question).catch((error: unknown) => error);
    expect(failureType(first)).toBe(FailureType.ConversationRollingOver);
    const answer = await askWithStart({ conversationId: id }, question);
    expect(answer).toMatchObject({ turn: 2, messageId: 'q-2', answer: 'Second, with memory.' });
    expect(
      requestsOf(id)
        .at(-1)
        ?.messages.map((message) => message.content),
    ).toEqual(['One.', 'First.', 'Two.']);
    expect((await client.status(id)).runId).not.toBe(closed.runId);
  });

  it('a reopen from a stale result (another client reopened and it closed again meanwhile) continues from the newest run', async () => {
    const id = book.conversation('stale', [{ content: 'A1' }, { content: 'A2' }, { content: 'A3' }]);
    const settings = { idleTimeoutMs: 1_000 };
    await client.ask(id, 'Q1', { settings });
    const first = await poll(
      () => client.status(id),
      (status) => !status.open,
    );
    const firstOutcome = await env.client.workflow
      .getHandle<Conversation>(conversationWorkflowId(id), first.runId, { followRuns: false })
      .result();
    const reopen = { conversationId: id, settings, state: firstOutcome.state, previousRunId: first.runId };

    // One client reopens from the first run's result, and that run closes again.
    await signalWithStart(reopen, { id: 'q-2', content: 'Q2' }, 'ALLOW_DUPLICATE');
    await poll(
      () => client.status(id),
      (status) => !status.open && status.turns === 2,
    );
    // Another client, still holding the first result, reopens from it: the newer run's turn is not lost.
    await signalWithStart(reopen, { id: 'q-3', content: 'Q3' }, 'ALLOW_DUPLICATE');
    await poll(
      () => client.status(id),
      (status) => status.turns === 3 && status.phase !== 'running',
    );
    expect(contents(await client.fullTranscript(id))).toEqual([
      'user: Q1',
      'assistant: A1',
      'user: Q2',
      'assistant: A2',
      'user: Q3',
      'assistant: A3',
    ]);
  });

  it('with the reuse policy the protocol asks for, a start over closed runs fails and changes nothing', async () => {
    const id = book.conversation('reject', [{ content: 'Only answer.' }]);
    await client.ask(id, 'Q1');
    await client.end(id);
    await poll(
      () => client.status(id),
      (status) => !status.open,
    );
    const rejected = await signalWithStart(
      { conversationId: id },
      { id: 'q-2', content: 'Q2' },
      'REJECT_DUPLICATE',
    ).catch((error: unknown) => error);
    expect((rejected as Error).name).toBe('WorkflowExecutionAlreadyStartedError');
    expect(requestsOf(id)).toHaveLength(1);
  });
});
