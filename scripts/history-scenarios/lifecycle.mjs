// A conversation's runs: closed idle and reopened by the next message; a run started over closed runs of its id
// without their state (the earlier-run check finds them and continues from them); encrypted payloads.
import { endSignal, userMessageSignal } from '../../dist/workflows/definitions.js';
import { answerQueued, ask, call, until } from './drive.mjs';

/** The latest run of the conversation, once it has closed and is not one of `runIds`. */
function closedRunAfter(context, runIds) {
  return until('the next run to close', async () => {
    const description = await context.handle().describe();
    return !runIds.includes(description.runId) && description.status.name !== 'RUNNING' ? description : undefined;
  });
}

/** The earlier-run check asks visibility which runs exist: wait until it lists `runId` as closed. */
function listedClosed(context, runId) {
  return until(`visibility to list run ${runId} as closed`, async () => {
    for await (const execution of context.temporal.workflow.list({ query: `WorkflowId = '${context.workflowId}'` })) {
      if (execution.runId === runId && execution.status.name !== 'RUNNING') return execution;
    }
    return undefined;
  });
}

/**
 * What a backend that knows only Temporal sends: a signal-with-start without the closed runs' state, with Temporal's
 * default id reuse policy (which allows a new run over closed ones). Returns the run it started.
 */
async function rawSignalWithStart(context, message) {
  const handle = await context.temporal.workflow.signalWithStart('conversationWorkflow', {
    taskQueue: context.taskQueue,
    workflowId: context.workflowId,
    args: [{ conversationId: context.id }],
    signal: userMessageSignal,
    signalArgs: [message],
  });
  return handle.signaledRunId;
}

/**
 * Once `handle`'s run has closed and visibility lists it, a raw signal-with-start of `message` over it: the run that
 * starts finds the closed one and continues as new; record both chains once the last run has completed.
 */
async function startOverClosedRun(context, handle, message) {
  await listedClosed(context, handle.firstExecutionRunId);
  const started = await rawSignalWithStart(context, message);
  const last = await closedRunAfter(context, [handle.firstExecutionRunId, started]);
  if (last.status.name !== 'COMPLETED') throw new Error(`the run continued from ${started} closed ${last.status.name}`);
  context.record(handle.firstExecutionRunId, started);
}

export const lifecycleScenarios = {
  'idle-reopened': {
    description:
      "run 1 closes idle (`idleTimeoutMs`); the client reopens it with the next message (run 2, from run 1's result), which closes idle too; `end` reopens it once more just to record the end (run 3)",
    script: [{ content: 'I will remember 42.' }, { content: 'You said 42.' }],
    async run(context) {
      const settings = { idleTimeoutMs: 1000 };
      const first = await context.client.send(context.id, 'Remember 42.', { messageId: 'm-1', settings });
      await closedRunAfter(context, []);
      const second = await context.client.send(context.id, 'What number?', { messageId: 'm-2', settings });
      if (!second.reopened) throw new Error('the second message did not reopen the conversation');
      await closedRunAfter(context, [first.runId]);
      await context.client.end(context.id);
      const ended = await closedRunAfter(context, [first.runId, second.runId]);
      context.record(first.runId, second.runId, ended.runId);
    },
  },
  'earlier-run-idle': {
    description:
      'run 1 closes idle; a raw signal-with-start (no state, default reuse policy) starts run 2, whose earlier-run check finds run 1 and continues as new from it (run 3), which answers and closes idle',
    script: [{ content: 'First answer.' }, { content: 'Second answer, with memory.' }],
    async run(context) {
      const handle = await context.start({
        settings: { idleTimeoutMs: 1000 },
        messages: [{ id: 'm-1', content: 'One.' }],
      });
      await handle.result();
      await startOverClosedRun(context, handle, { id: 'm-2', content: 'Two.' });
    },
  },
  'earlier-run-ended': {
    description:
      'run 1 is ended; a raw signal-with-start starts run 2, whose earlier-run check finds the ended run and continues as new (run 3) with its state, marked ended: it takes no message and closes',
    script: [{ content: 'Goodbye.' }],
    async run(context) {
      const handle = await context.start({});
      await ask(handle, 'm-1', 'Last question.');
      await handle.signal(endSignal, {});
      await handle.result();
      await startOverClosedRun(context, handle, { id: 'm-2', content: 'Are you there?' });
    },
  },
  'encrypted-tool-turn': {
    encrypted: true,
    description: 'encrypted payloads (the fixture key): an `ask` with a tool call, then `end`',
    script: [{ toolCalls: [call('echo', { text: 'fixture-word-7f3a' })] }, { content: 'The tool echoed it.' }],
    async run(context) {
      await context.client.ask(context.id, 'Echo the fixture word, please.', { messageId: 'm-1' });
      await context.client.end(context.id);
      await context.handle().result();
      context.record((await context.handle().describe()).runId);
    },
  },
  'encrypted-continue-as-new': {
    encrypted: true,
    description: 'encrypted payloads: `maxTurnsPerRun: 1` with two queued messages, two runs',
    script: [{ content: 'answer one' }, { toolCalls: [call('echo', { text: 'two' })] }, { content: 'answer two' }],
    run: (context) => answerQueued(context, ['one', 'two'], { maxTurnsPerRun: 1 }),
  },
};
