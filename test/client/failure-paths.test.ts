import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient, MessageRejectedError } from '../../src/client/index.js';
import { FailureType } from '../../src/shared/errors.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { askUpdate, conversationWorkflowId } from '../../src/workflows/definitions.js';
import { deliveredFailureText, machinePathsIn } from '../helpers/machine-paths.js';
import { allText } from '../helpers/secrets.js';
import { poll, ScriptBook } from './helpers.js';

/**
 * A refused `ask` reaches every client, in any language, and an accepted one that fails stays in the history: neither
 * may carry a stack trace naming the worker's files (the install directory of whoever runs it).
 */

let env: TestWorkflowEnvironment;
let agent: TestAgent;
let client: DurableAgentClient;
const book = new ScriptBook('failure-paths');

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script: book.script });
  client = new DurableAgentClient({ client: env.client, taskQueue: agent.taskQueue });
});

afterAll(async () => {
  await agent?.close();
  await env?.teardown();
});

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
});
