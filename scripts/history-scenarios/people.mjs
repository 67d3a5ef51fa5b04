// Turns that wait for a person: tool calls that need approval (approved, approved with edited arguments, denied,
// timed out, allowed for the rest of the conversation, interrupted) and an MCP server's question (elicitation)
// answered or cancelled. Every scenario records whole runs (state `finished`).
import { call, finishAndRecord, idleAfter, pendingApproval, pendingInput, startQueued, statusWhen } from './drive.mjs';

/** Every tool not annotated read-only waits for approval: of the test server's tools, set_value and increment. */
const approval = { require: 'writes' };
const store = call('set_value', { key: 'plan', value: 'pro' });
const approvalScript = [{ toolCalls: [store] }, { content: 'Done as decided.' }];

/** A one-message conversation whose first tool call waits: `decide` decides it, then the run closes. */
async function decideOnce(context, decide, settings = { approval }) {
  const handle = await startQueued(context, ['Put Ada on the pro plan.'], settings);
  await decide(await pendingApproval(handle));
  await finishAndRecord(context, handle);
}

/** `ask_user` asks the person for a name and an age; the model then answers with what the tool returned. */
const askUserScript = [{ toolCalls: [call('ask_user', { message: 'Who are you?' })] }, { content: 'Thank you.' }];

async function answerQuestion(context, answer) {
  const handle = await startQueued(context, ['Ask me who I am.']);
  const request = await pendingInput(handle);
  await context.client.answerInput(context.id, request.requestId, answer);
  await finishAndRecord(context, handle);
}

export const peopleScenarios = {
  'approval-approved': {
    description: 'a call waits for approval (`approval.require: writes`); `approve`; it runs',
    script: approvalScript,
    run: (context) =>
      decideOnce(context, (pending) => context.client.approve(context.id, pending.callId, { by: 'ops' })),
  },
  'approval-edited': {
    description: '`approve` with edited arguments: the call runs with them, noted before its result',
    script: approvalScript,
    run: (context) =>
      decideOnce(context, (pending) =>
        context.client.approve(context.id, pending.callId, { arguments: { key: 'plan', value: 'basic' }, by: 'ops' }),
      ),
  },
  'approval-denied': {
    description: '`deny` with a reason: the call does not run and the model gets the reason',
    script: approvalScript,
    run: (context) =>
      decideOnce(context, (pending) =>
        context.client.deny(context.id, pending.callId, { reason: 'Not before the contract is renewed.', by: 'ops' }),
      ),
  },
  'approval-timed-out': {
    description: '`approval.timeoutMs: 1000` passes without a decision: denied by `timeout` (a durable timer)',
    script: approvalScript,
    run: (context) => decideOnce(context, async () => undefined, { approval: { ...approval, timeoutMs: 1000 } }),
  },
  'approval-always': {
    description:
      '`approve` with `always` in run 1; `maxTurnsPerRun: 1` carries the allowed tool to run 2, where the same tool runs without waiting',
    script: [{ toolCalls: [store] }, { content: 'Stored.' }, { toolCalls: [store] }, { content: 'Stored again.' }],
    async run(context) {
      const handle = await startQueued(context, ['Store it.', 'Store it again.'], { approval, maxTurnsPerRun: 1 });
      const pending = await pendingApproval(handle);
      await context.client.approve(context.id, pending.callId, { always: true, by: 'ops' });
      const outcome = await handle.result();
      if (outcome.state.turns !== 2 || !outcome.state.allowedTools?.includes('test__set_value')) {
        throw new Error(`the second run did not answer with the tool allowed: ${JSON.stringify(outcome.state)}`);
      }
      context.record(handle.firstExecutionRunId);
    },
  },
  'approval-interrupted': {
    description: '`interrupt` while a call waits for approval: the call is denied by `interrupt`; then `end`',
    script: approvalScript,
    async run(context) {
      const handle = await context.start({ settings: { approval } });
      await context.client.send(context.id, 'Put Ada on the pro plan.', { messageId: 'm-1' });
      await pendingApproval(handle);
      await context.client.interrupt(context.id, { reason: 'not now' });
      await statusWhen(handle, 'the interrupted turn', idleAfter(1));
      await context.client.end(context.id);
      await handle.result();
      context.record(handle.firstExecutionRunId);
    },
  },
  'elicitation-answered': {
    description: "the test server's `ask_user` asks a question (`requestInput`); `answerInput` accepts with content",
    script: askUserScript,
    run: (context) => answerQuestion(context, { action: 'accept', content: { name: 'Ada', age: 36 }, by: 'ada' }),
  },
  'elicitation-cancelled': {
    description: "`ask_user`'s question answered with `cancel`",
    script: askUserScript,
    run: (context) => answerQuestion(context, { action: 'cancel', by: 'ada' }),
  },
};
