import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConversationEndedError,
  ConversationNotFoundError,
  DurableAgentClient,
  MessageRejectedError,
} from '../../src/client/index.js';
import { FailureType } from '../../src/shared/errors.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { askUpdate, conversationWorkflowId } from '../../src/workflows/definitions.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';
import { deliveredFailureText, machinePathsIn } from '../helpers/machine-paths.js';
import { allText } from '../helpers/secrets.js';
import { expectValidToolPairing } from '../helpers/transcript.js';
import { poll, ScriptBook } from './helpers.js';

let env: TestWorkflowEnvironment;
let crm: Crm;
let agent: TestAgent;
let client: DurableAgentClient;
const book = new ScriptBook('api');

beforeAll(async () => {
  env = await createLocalEnvironment();
  crm = await startCrm();
  agent = await startTestAgent({ env, script: book.script, mcpServers: [crm.config()] });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await crm?.close();
  await env?.teardown();
});

const contents = (messages: { role: string; content: string | null }[]) =>
  messages.map((message) => `${message.role}: ${message.content ?? ''}`);

describe('DurableAgentClient', () => {
  it('send creates the conversation, then appends to it; both messages are answered in order', async () => {
    const id = book.conversation('send', [{ content: 'first answer', delayMs: 300 }, { content: 'second answer' }]);
    const first = await client.send(id, 'first question');
    expect(first).toMatchObject({ conversationId: id, created: true, reopened: false });
    const second = await client.send(id, 'second question', { messageId: 'my-id-2' });
    expect(second).toMatchObject({ created: false, messageId: 'my-id-2', runId: first.runId });
    // The same message id again (a retried call) is answered once.
    await client.send(id, 'second question', { messageId: 'my-id-2' });

    const status = await poll(
      () => client.status(id),
      (current) => current.turns === 2 && current.phase === 'idle',
    );
    expect(status).toMatchObject({ open: true, queued: 0, lastResult: { answer: 'second answer', turn: 2 } });
    expect(contents(await client.fullTranscript(id))).toEqual([
      'user: first question',
      'assistant: first answer',
      'user: second question',
      'assistant: second answer',
    ]);
  });

  it('ask returns the TurnResult of a turn that called two tools of a real MCP server', async () => {
    const id = book.conversation('ask', [
      { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
      { toolCalls: [{ name: 'crm__get_company', arguments: { companyId: 'c-9' } }] },
      { content: 'Ada works at Analytical Engines Ltd in London.' },
    ]);
    const result = await client.ask(id, 'Where does Ada work?', { messageId: 'question-1' });
    expect(result).toMatchObject({
      conversationId: id,
      turn: 1,
      messageId: 'question-1',
      answer: 'Ada works at Analytical Engines Ltd in London.',
      stopReason: 'completed',
      rounds: 3,
      toolCalls: 2,
    });
    const last = agent.model.requests.filter((request) => request.conversation === `conversation-${id}`).at(-1)!;
    expectValidToolPairing(last.messages);
    expect(last.messages.filter((message) => message.role === 'tool')).toHaveLength(2);

    // Asking again with the same id returns the same result; no new turn.
    expect(await client.ask(id, 'Where does Ada work?', { messageId: 'question-1' })).toEqual(result);
    expect((await client.status(id)).turns).toBe(1);
  });

  it('a message to a conversation whose run closed idle reopens it with its transcript', async () => {
    const id = book.conversation('reopen', [{ content: 'I will remember 42.' }, { content: 'You said 42.' }]);
    const settings = { idleTimeoutMs: 1_500, systemPrompt: 'Be brief.' };
    await client.ask(id, 'Remember 42.', { settings });
    const closed = await poll(
      () => client.status(id),
      (status) => !status.open,
    );
    expect(closed).toMatchObject({ phase: 'idle', turns: 1 });

    const result = await client.ask(id, 'What number?');
    expect(result).toMatchObject({ turn: 2, answer: 'You said 42.' });
    const request = agent.model.requests.filter((entry) => entry.conversation === `conversation-${id}`).at(-1)!;
    expect(request.messages.map((message) => message.content)).toEqual([
      'Be brief.',
      'Remember 42.',
      'I will remember 42.',
      'What number?',
    ]);
    const reopened = await client.status(id);
    expect(reopened.runId).not.toBe(closed.runId);
    expect(contents(await client.fullTranscript(id))).toEqual([
      'system: Be brief.',
      'user: Remember 42.',
      'assistant: I will remember 42.',
      'user: What number?',
      'assistant: You said 42.',
    ]);
    // The reopened run kept the settings of the first (its idle timeout closes it again).
    await poll(
      () => client.status(id),
      (status) => !status.open,
    );
  });

  it('an ended conversation refuses messages with ConversationEndedError', async () => {
    const id = book.conversation('ended', [{ content: 'Goodbye.' }]);
    await client.ask(id, 'Last question.');
    await client.end(id, { reason: 'done' });
    await poll(
      () => client.status(id),
      (status) => !status.open && status.phase === 'ended',
    );
    await expect(client.send(id, 'Are you there?')).rejects.toBeInstanceOf(ConversationEndedError);
    const error = await client.ask(id, 'Are you there?').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(ConversationEndedError);
    expect((error as ConversationEndedError).message).toMatch(/has ended.*Start a new conversation/);
    // Ending again is harmless.
    await client.end(id);
  });

  it('invalid messages are rejected with MessageRejectedError and the reason, without touching the conversation', async () => {
    const id = book.conversation('invalid', [{ content: 'ok' }]);
    const empty = await client.ask(id, '   ').catch((failure: unknown) => failure);
    expect(empty).toBeInstanceOf(MessageRejectedError);
    expect((empty as MessageRejectedError).reason).toMatch(/non-empty string/);
    // Nothing was created by the rejected message.
    await expect(client.status(id)).rejects.toBeInstanceOf(ConversationNotFoundError);

    await client.ask(id, 'hello', { settings: { maxMessageChars: 10 } });
    // The running conversation's own validator (its limit is 10) rejects this one.
    const long = await client.ask(id, 'x'.repeat(11)).catch((failure: unknown) => failure);
    expect(long).toBeInstanceOf(MessageRejectedError);
    expect((long as MessageRejectedError).reason).toMatch(/11 characters; the limit is 10/);
    expect((await client.status(id)).turns).toBe(1);
    await client.end(id);
  });

  it('status, transcript and interrupt of a conversation that does not exist raise ConversationNotFoundError', async () => {
    const id = book.conversation('missing');
    await expect(client.status(id)).rejects.toBeInstanceOf(ConversationNotFoundError);
    await expect(client.transcript(id)).rejects.toBeInstanceOf(ConversationNotFoundError);
    await expect(client.interrupt(id)).rejects.toBeInstanceOf(ConversationNotFoundError);
    await expect(client.end(id)).rejects.toBeInstanceOf(ConversationNotFoundError);
  });

  it('interrupt stops a turn that waits on a hanging tool; the ask resolves as cancelled', async () => {
    const id = book.conversation('interrupt', [{ toolCalls: [{ name: 'crm__hang', arguments: {} }] }]);
    const asked = client.ask(id, 'Do the slow thing.');
    await poll(
      () => client.status(id).catch(() => undefined),
      (status) => status?.currentTurn?.activity.startsWith('tools') ?? false,
    );
    await client.interrupt(id, { reason: 'too slow' });
    expect(await asked).toMatchObject({ stopReason: 'cancelled', answer: null, toolCalls: 1 });
    const transcript = await client.fullTranscript(id);
    expect(transcript.at(-1)).toMatchObject({
      role: 'assistant',
      content: '[The user interrupted this turn: too slow.]',
    });
    await client.end(id);
  });

  it('list filters conversations by status through the search attributes', async () => {
    const idle = book.conversation('list-idle', [{ content: 'done' }]);
    const running = book.conversation('list-running', [{ toolCalls: [{ name: 'crm__hang', arguments: {} }] }]);
    const ended = book.conversation('list-ended', [{ content: 'bye' }]);
    await client.ask(idle, 'hi');
    await client.ask(ended, 'hi');
    await client.end(ended);
    await client.send(running, 'hang please');
    const ours = `DurableAgentConversationId IN ('${idle}', '${running}', '${ended}')`;
    const ids = async (status?: 'idle' | 'running' | 'ended') =>
      (await client.list({ status, query: ours })).map((summary) => summary.conversationId).sort();

    await poll(
      () => ids('running'),
      (found) => found.join() === running,
    );
    await poll(
      () => ids('ended'),
      (found) => found.join() === ended,
    );
    await poll(
      () => ids('idle'),
      (found) => found.join() === idle,
    );
    const all = await client.list({ query: ours });
    expect(all.map((summary) => summary.conversationId).sort()).toEqual([idle, running, ended].sort());
    expect(all.find((summary) => summary.conversationId === idle)).toMatchObject({ turns: 1, open: true });

    await client.interrupt(running);
    await client.end(running);
  });

  it('the transcript reads the whole conversation across continue-as-new, also where older turns were dropped', async () => {
    // Answers of 270k characters: the carried transcript (at most 512 KiB) keeps only the latest turn.
    const big = (letter: string) => letter.repeat(270_000);
    const id = book.conversation('rollover', [{ content: big('a') }, { content: big('b') }, { content: 'short' }]);
    const settings = { maxTurnsPerRun: 1, systemPrompt: 'System.' };
    await client.ask(id, 'one', { settings });
    await client.ask(id, 'two');
    const third = await client.ask(id, 'three');
    expect(third).toMatchObject({ turn: 3, answer: 'short' });

    const status = await poll(
      () => client.status(id),
      (current) => current.transcriptOffset > 0,
    );
    expect(status.transcriptLength).toBe(7);
    const whole = await client.fullTranscript(id);
    expect(whole.map((message) => `${message.role}: ${(message.content ?? '').slice(0, 8)}`)).toEqual([
      'system: System.',
      'user: one',
      'assistant: aaaaaaaa',
      'user: two',
      'assistant: bbbbbbbb',
      'user: three',
      'assistant: short',
    ]);
    expect(whole[2]?.content).toHaveLength(270_000);

    // Pages of two messages stitch the runs together without gaps or repeats.
    const paged: string[] = [];
    let from: number | undefined = 0;
    while (from !== undefined) {
      const page = await client.transcript(id, { from, limit: 2 });
      expect(page.from).toBe(from);
      expect(page.total).toBe(7);
      paged.push(...page.messages.map((message) => (message.content ?? '').slice(0, 8)));
      from = page.nextFrom;
    }
    expect(paged).toEqual(whole.map((message) => (message.content ?? '').slice(0, 8)));
    const tail = await client.transcript(id, { from: 5 });
    expect(contents(tail.messages)).toEqual(['user: three', 'assistant: short']);
    await client.end(id);
  });
});

/**
 * A refused `ask` reaches every client, in any language, and an accepted one that fails stays in the history: neither
 * may carry a stack trace naming the worker's files (the install directory of whoever runs it).
 */
describe('failures that reach clients and histories name no path of the machine', () => {
  it("an ask refused by the update's validator: the failure the client receives has no machine path", async () => {
    const id = book.conversation('too-long', [{ content: 'ok' }]);
    await client.ask(id, 'hello', { settings: { maxMessageChars: 10 } });

    // Temporal's own client, as a backend in any language sees it.
    const handle = env.client.workflow.getHandle(conversationWorkflowId(id));
    const message = { id: 'too-long-1', content: 'x'.repeat(11) };
    const raw = await handle
      .executeUpdate(askUpdate, { args: [message], updateId: message.id })
      .catch((failure: unknown) => failure);
    expect(raw).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((raw as WorkflowUpdateFailedError).cause).toBeInstanceOf(ApplicationFailure);
    expect((raw as WorkflowUpdateFailedError).cause).toMatchObject({ type: FailureType.InvalidMessage });
    expect(deliveredFailureText(raw)).toMatch(/11 characters; the limit is 10/);
    expect(machinePathsIn(deliveredFailureText(raw))).toEqual([]);

    // durable-agent's client.
    const rejected = await client.ask(id, 'y'.repeat(11)).catch((failure: unknown) => failure);
    expect(rejected).toBeInstanceOf(MessageRejectedError);
    expect(deliveredFailureText(rejected)).toMatch(/11 characters; the limit is 10/);
    expect(machinePathsIn(deliveredFailureText(rejected))).toEqual([]);
    await client.end(id);
  });

  it('an ask taken and then failed by the end: neither the client nor the history gets a machine path', async () => {
    const id = book.conversation('ended-waiting', [{ content: 'first answer', delayMs: 1_500 }]);
    const workflowId = conversationWorkflowId(id);
    await client.send(id, 'first question');
    const handle = env.client.workflow.getHandle(workflowId);
    const second = { id: 'ended-waiting-2', content: 'second question' };
    const waiting = handle
      .executeUpdate(askUpdate, { args: [second], updateId: second.id })
      .catch((failure: unknown) => failure);
    await poll(
      () => client.status(id),
      (status) => status.queued === 1,
    );
    await client.end(id);

    const failure = await waiting;
    expect(failure).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((failure as WorkflowUpdateFailedError).cause).toMatchObject({ type: FailureType.ConversationEnded });
    expect(machinePathsIn(deliveredFailureText(failure))).toEqual([]);

    const history = await handle.fetchHistory();
    const updateFailures = (history.events ?? []).flatMap((event) => {
      const failed = event.workflowExecutionUpdateCompletedEventAttributes?.outcome?.failure;
      return failed ? [failed] : [];
    });
    expect(updateFailures.map((recorded) => recorded.applicationFailureInfo?.type)).toEqual([
      FailureType.ConversationEnded,
    ]);
    for (const recorded of updateFailures) {
      expect(recorded.message).toMatch(/ended before message ended-waiting-2 was answered/);
      expect(machinePathsIn(`${recorded.message}\n${recorded.stackTrace ?? ''}`)).toEqual([]);
    }
    expect(machinePathsIn(allText(history))).toEqual([]);
  });

  it("a failed model call: the activity's failure in history, and its causes, carry no stack trace", async () => {
    // A dropped stream fails inside the openai SDK: an unexpected error, whose stack names the install directory.
    const id = book.conversation('model-fails', [{ content: 'one two three', failAfterChunks: 1 }]);
    const result = await client.ask(id, 'hello', { settings: { modelAttempts: 1 } });
    expect(result.stopReason).toMatch(/^error:/);
    const history = await env.client.workflow.getHandle(conversationWorkflowId(id)).fetchHistory();
    const failures = (history.events ?? []).flatMap((event) => {
      const failure = event.activityTaskFailedEventAttributes?.failure;
      return failure ? [failure] : [];
    });
    expect(failures.length).toBeGreaterThan(0);
    for (let failure = failures[0]; failure; failure = failure.cause ?? undefined) {
      expect(failure.stackTrace ?? '', failure.message ?? '').toBe('');
    }
    expect(machinePathsIn(allText(history))).toEqual([]);
    await client.end(id);
  });
});
