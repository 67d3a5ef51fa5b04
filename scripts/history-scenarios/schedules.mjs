// Messages a schedule's firing sends (docs/cli.md, "Schedules"): with `--overlap skip` a firing's message carries
// `skipIfBusy`, which the conversation drops while a turn runs (behind `patched('skip-if-busy')`). Records whole runs.
import { call, finishAndRecord, pendingApproval, startQueued } from './drive.mjs';

const store = call('set_value', { key: 'plan', value: 'pro' });

export const scheduleScenarios = {
  'skip-if-busy': {
    description:
      'a `skipIfBusy` message (a firing with `--overlap skip`) arrives while a turn waits for approval: dropped, with ' +
      'the `skip-if-busy` patch marker; a `skipIfBusy` message once idle would be queued',
    script: [{ toolCalls: [store] }, { content: 'Done as decided.' }],
    async run(context) {
      const handle = await startQueued(context, ['Put Ada on the pro plan.'], { approval: { require: 'writes' } });
      const pending = await pendingApproval(handle);
      await context.client.send(context.id, 'Tick.', { messageId: 'scheduled-tick-1', skipIfBusy: true });
      await context.client.approve(context.id, pending.callId, { by: 'ops' });
      await finishAndRecord(context, handle);
    },
  },
};
