import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import {
  askUpdate,
  type ConversationOutcome,
  type TurnResult,
  endSignal,
  handlerDescriptions,
  interruptSignal,
  statusQuery,
  transcriptQuery,
  userMessageSignal,
} from '../../src/workflows/definitions.js';
import { SUB_AGENT_APPROVAL_DESCRIPTION } from '../../src/workflows/sub-agent-approvals.js';
import { SUB_AGENT_INPUT_DESCRIPTION } from '../../src/workflows/sub-agent-inputs.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { updateRejection } from '../helpers/updates.js';
import { expectValidToolPairing } from '../helpers/transcript.js';
import { waitForStatus } from '../helpers/status.js';

const bed = useTimeSkippingWithCrm();
let counter = 0;

const { agentWith } = bed;

const message = (content: string, id = `m-${++counter}`) => ({ id, content });

describe('a conversation driven by signals and updates', () => {
  it('answers messages that arrive while a turn runs one by one, in order', async () => {
    const agent = await agentWith([
      { content: 'first answer', delayMs: 500 },
      { content: 'second answer' },
      { content: 'third answer' },
    ]);
    const handle = await agent.startConversation('queued');
    await handle.signal(userMessageSignal, message('one'));
    await handle.signal(userMessageSignal, message('two'));
    const third = await handle.executeUpdate(askUpdate, { args: [message('three')] });

    expect(third).toMatchObject({ turn: 3, answer: 'third answer', stopReason: 'completed' });
    const page = await handle.query(transcriptQuery);
    expect(page.messages.map((entry) => [entry.role, entry.content])).toEqual([
      ['user', 'one'],
      ['assistant', 'first answer'],
      ['user', 'two'],
      ['assistant', 'second answer'],
      ['user', 'three'],
      ['assistant', 'third answer'],
    ]);
  });

  it('a message delivered twice (a retried signal) is answered once', async () => {
    const agent = await agentWith([{ content: 'once' }, { content: 'after' }]);
    const handle = await agent.startConversation('duplicate');
    const repeated = message('hello');
    await handle.signal(userMessageSignal, repeated);
    await handle.signal(userMessageSignal, repeated);
    const after = await handle.executeUpdate(askUpdate, { args: [message('next')] });
    expect(after.turn).toBe(2);
    const page = await handle.query(transcriptQuery);
    expect(page.messages.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual([
      'hello',
      'next',
    ]);
  });

  it('an ask that repeats an answered message id returns the earlier result instead of a new turn', async () => {
    const agent = await agentWith([{ content: 'only once' }]);
    const handle = await agent.startConversation('repeated-ask');
    const question = message('hi');
    const first = await handle.executeUpdate(askUpdate, { args: [question] });
    const again = await handle.executeUpdate(askUpdate, { args: [question] });
    expect(again).toEqual(first);
    expect(agent.model.requests).toHaveLength(1);
  });

  it('the ask validator rejects empty, oversized or malformed input without touching the conversation', async () => {
    const agent = await agentWith([]);
    const handle = await agent.startConversation('validation', { settings: { maxMessageChars: 10 } });
    const empty = await updateRejection(handle.executeUpdate(askUpdate, { args: [message('   ')] }));
    expect(empty.type).toBe(FailureType.InvalidMessage);
    const long = await updateRejection(handle.executeUpdate(askUpdate, { args: [message('x'.repeat(11))] }));
    expect(long.message).toMatch(/11 characters; the limit is 10/);
    const noId = await updateRejection(handle.executeUpdate(askUpdate, { args: [{ content: 'hi' } as never] }));
    expect(noId.message).toMatch(/needs an "id"/);
    const status = await handle.query(statusQuery);
    expect(status).toMatchObject({ turns: 0, queued: 0, transcriptLength: 0, phase: 'idle' });
    expect(agent.model.requests).toHaveLength(0);
  });
});

describe('interrupt and end', () => {
  it('interrupt in the middle of a tool call cancels it, writes a cancelled result, and the next turn is valid', async () => {
    const agent = await agentWith([
      { toolCalls: [{ name: 'crm__hang', arguments: {} }] },
      { content: 'Fine, something else then.' },
    ]);
    const cancellationsBefore = bed.crm.cancellations;
    const handle = await agent.startConversation('interrupt');
    await handle.signal(userMessageSignal, message('do the slow thing'));
    await waitForStatus(handle, (status) => status.currentTurn?.activity.startsWith('tools') ?? false);
    await handle.signal(interruptSignal, { reason: 'changed my mind' });
    const status = await waitForStatus(handle, (current) => current.phase === 'idle' && current.turns === 1);
    expect(status.lastResult).toMatchObject({ stopReason: 'cancelled', answer: null, toolCalls: 1 });

    // The cancellation reached the MCP server (the request was aborted, not left running).
    for (let attempt = 0; attempt < 100 && bed.crm.cancellations === cancellationsBefore; attempt++) await sleep(100);
    expect(bed.crm.cancellations).toBe(cancellationsBefore + 1);

    const next = await handle.executeUpdate(askUpdate, { args: [message('something else')] });
    expect(next).toMatchObject({ turn: 2, stopReason: 'completed', answer: 'Fine, something else then.' });
    const request = agent.model.requests.at(-1)!;
    expectValidToolPairing(request.messages);
    expect(request.messages.map((entry) => entry.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(request.messages[2]?.content).toMatch(/interrupted the turn/);
    expect(request.messages[3]?.content).toBe('[The user interrupted this turn: changed my mind.]');
  });

  it('end closes the conversation after the current turn; asks meanwhile are rejected as ConversationEnded', async () => {
    const agent = await agentWith([{ content: 'last words', delayMs: 1_000 }]);
    const handle = await agent.startConversation('end');
    await handle.signal(userMessageSignal, message('final question'));
    await waitForStatus(handle, (status) => status.phase === 'running');
    await handle.signal(endSignal, {});
    const rejected = await updateRejection(handle.executeUpdate(askUpdate, { args: [message('too late')] }));
    expect(rejected.type).toBe(FailureType.ConversationEnded);
    const outcome = (await handle.result()) as ConversationOutcome;
    expect(outcome.closedBecause).toBe('ended');
    expect(outcome.state.lastResult).toMatchObject({ answer: 'last words', stopReason: 'completed' });
  });

  it('an idle timeout closes the run with its state; a new run started from that state goes on', async () => {
    const agent = await agentWith([{ content: 'first' }, { content: 'second, with memory' }]);
    const settings = { idleTimeoutMs: 60 * 60 * 1000 };
    const handle = await agent.startConversation('idle', { settings, messages: [message('remember 42')] });
    const outcome = (await handle.result()) as ConversationOutcome; // time skips the idle hour
    expect(outcome.closedBecause).toBe('idle');
    expect(outcome.state.turns).toBe(1);
    // The result carries everything the reopening run needs (docs/protocol.md, "Reopening"): no history to read.
    expect(outcome.settings).toEqual(settings);

    const reopened = await agent.startConversation('idle', {
      settings: outcome.settings,
      state: outcome.state,
      previousRunId: handle.firstExecutionRunId,
    });
    const result = await reopened.executeUpdate(askUpdate, { args: [message('what number?')] });
    expect(result).toMatchObject({ turn: 2, answer: 'second, with memory' });
    const request = agent.model.requests.at(-1)!;
    expect(request.messages.map((entry) => entry.content)).toEqual(['remember 42', 'first', 'what number?']);
    await reopened.signal(endSignal, {});
  });
});

describe('continue-as-new', () => {
  /** Ask until the latest run answers: while the conversation hands over, asks fail as rolling over. */
  async function askLatest(workflowId: string, question: { id: string; content: string }): Promise<TurnResult> {
    const latest = bed.env.client.workflow.getHandle<typeof conversationWorkflow>(workflowId);
    for (let attempt = 0; ; attempt++) {
      try {
        return await latest.executeUpdate(askUpdate, { args: [question], updateId: question.id });
      } catch (error) {
        const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
        const rolling = cause instanceof ApplicationFailure && cause.type === FailureType.ConversationRollingOver;
        if (!rolling || attempt >= 50) throw error;
        await sleep(100);
      }
    }
  }

  it('rolls over after maxTurnsPerRun, carrying the transcript, queue and remembered ids', async () => {
    const agent = await agentWith([
      { content: 'answer one', delayMs: 1_000 },
      { content: 'answer carried' },
      { content: 'answer two' },
      { content: 'answer three' },
    ]);
    const handle = await agent.startConversation('rollover', { settings: { maxTurnsPerRun: 1 } });
    const first = message('one');
    await handle.signal(userMessageSignal, first);
    await waitForStatus(handle, (status) => status.phase === 'running');

    // The run's last turn is under way. A new ask is taken, not refused; this run will not answer it, so it ends as
    // rolling over when the run hands over, and its message goes to the next run, ahead of a later signal.
    const carried = message('carried');
    const accepted = await handle.startUpdate(askUpdate, {
      args: [carried],
      updateId: carried.id,
      waitForStage: WorkflowUpdateStage.ACCEPTED,
    });
    await handle.signal(userMessageSignal, message('two'));
    const handedOver = await updateRejection(accepted.result());
    expect(handedOver.type).toBe(FailureType.ConversationRollingOver);
    expect(handedOver.message).toMatch(/carried over: ask again with the same id/);

    // Asked again with the same id, the next run answers it.
    expect(await askLatest(handle.workflowId, carried)).toMatchObject({ turn: 2, answer: 'answer carried' });
    const latest = agent.env.client.workflow.getHandle<typeof conversationWorkflow>(handle.workflowId);
    expect((await latest.describe()).runId).not.toBe(handle.firstExecutionRunId);

    await latest.signal(userMessageSignal, first); // remembered across the rollover: ignored
    // With one turn per run, every turn is a run's last: retry while it rolls over, as the client does.
    const third = await askLatest(handle.workflowId, message('three'));
    expect(third).toMatchObject({ turn: 4, answer: 'answer three' });

    const page = await latest.query(transcriptQuery, { from: 0 });
    expect(page.total).toBe(8);
    expect(page.messages.map((entry) => entry.content)).toContain('three');
    expect(page.previousRunId).toBeDefined();
    const users = agent.model.requests.map((request) => request.messages.at(-1)?.content);
    expect(users).toEqual(['one', 'carried', 'two', 'three']);
  });
});

describe('handler metadata', () => {
  it('every handler has a description, shown by the Web UI and `temporal workflow metadata`', async () => {
    const agent = await agentWith([]);
    const handle = await agent.startConversation('metadata');
    interface Definition {
      name: string;
      description?: string;
    }
    const metadata = await handle.query<{
      definition: { queryDefinitions: Definition[]; signalDefinitions: Definition[]; updateDefinitions: Definition[] };
    }>('__temporal_workflow_metadata');
    const { queryDefinitions, signalDefinitions, updateDefinitions } = metadata.definition;
    const described = (definitions: Definition[]) =>
      Object.fromEntries(
        definitions
          .filter((definition) => !definition.name.startsWith('__'))
          .map((definition) => [definition.name, definition.description]),
      );
    expect(described(signalDefinitions)).toEqual({
      userMessage: handlerDescriptions.userMessage,
      interrupt: handlerDescriptions.interrupt,
      end: handlerDescriptions.end,
      stream: handlerDescriptions.stream,
      subAgentApproval: SUB_AGENT_APPROVAL_DESCRIPTION,
      subAgentInput: SUB_AGENT_INPUT_DESCRIPTION,
    });
    expect(described(updateDefinitions)).toEqual({
      ask: handlerDescriptions.ask,
      pollEvents: handlerDescriptions.pollEvents,
      approve: handlerDescriptions.approve,
      deny: handlerDescriptions.deny,
      requestInput: handlerDescriptions.requestInput,
      answerInput: handlerDescriptions.answerInput,
    });
    expect(described(queryDefinitions)).toEqual({
      status: handlerDescriptions.status,
      transcript: handlerDescriptions.transcript,
      modelContext: handlerDescriptions.modelContext,
    });
    expect(SUB_AGENT_APPROVAL_DESCRIPTION).toMatch(/^Internal/);
    expect(SUB_AGENT_INPUT_DESCRIPTION).toMatch(/^Internal/);
    for (const internal of ['stream', 'pollEvents', 'modelContext', 'requestInput'] as const) {
      expect(handlerDescriptions[internal]).toMatch(/^Internal/);
    }
    await handle.signal(endSignal, {});
  });
});
