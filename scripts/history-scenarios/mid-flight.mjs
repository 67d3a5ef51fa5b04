// Histories taken mid-flight, as a new worker meets them after a deploy: exported while a model call, a tool call, an
// approval or a server's question is pending, then the run is let finish so nothing is left running.
import {
  acceptedUpdates,
  call,
  openActivities,
  pendingApproval,
  pendingInput,
  signalsIn,
  startQueued,
} from './drive.mjs';

const startOneShot = (context, settings) => startQueued(context, ['Go.'], settings);

export const midFlightScenarios = {
  'mid-model-call': {
    description: 'taken while the model call streams: its activity started, some `stream` signals in, no result yet',
    script: [
      { content: 'An answer that takes its time to be written, word after word after word.', chunkDelayMs: 250 },
    ],
    async run(context) {
      const handle = await startOneShot(context);
      await context.capture(
        'mid-model-call',
        (history) => openActivities(history, 'callModel') === 1 && signalsIn(history, 'stream') > 0,
      );
      await handle.result();
    },
  },
  'mid-tool-call': {
    description: 'taken while a 3 s tool call runs (its activity started, no result yet)',
    script: [{ toolCalls: [call('slow', { delayMs: 3000 })] }, { content: 'Waited.' }],
    async run(context) {
      const handle = await startOneShot(context);
      await context.capture('mid-tool-call', (history) => openActivities(history, 'callTool') === 1);
      await handle.result();
    },
  },
  'mid-approval': {
    description: 'taken while a tool call waits for approval; then approved',
    script: [{ toolCalls: [call('set_value', { key: 'plan', value: 'pro' })] }, { content: 'Stored.' }],
    async run(context) {
      const handle = await startOneShot(context, { approval: { require: 'writes' } });
      const pending = await pendingApproval(handle);
      await context.capture('awaiting-approval', (history) => openActivities(history, 'callModel') === 0);
      await context.client.approve(context.id, pending.callId, { by: 'ops' });
      await handle.result();
    },
  },
  'mid-elicitation': {
    description:
      "taken while the test server's `ask_user` waits for the person's answer (its tool call in flight); then answered",
    script: [{ toolCalls: [call('ask_user', { message: 'Who are you?' })] }, { content: 'Thank you.' }],
    async run(context) {
      const handle = await startOneShot(context);
      const request = await pendingInput(handle);
      await context.capture(
        'awaiting-input',
        (history) => openActivities(history, 'callTool') === 1 && acceptedUpdates(history, 'requestInput') > 0,
      );
      await context.client.answerInput(context.id, request.requestId, { action: 'accept', content: { name: 'Ada' } });
      await handle.result();
    },
  },
};
