// A cost budget set to `pause` (docs/cost.md, "Pause instead of fail"): the model call that would pass it waits as a
// decision of kind `budget`, approved with a raised limit or denied. gpt-4o-mini is priced by the package's table.
import { call, finishAndRecord, pendingApproval, startQueued } from './drive.mjs';

const usage = { prompt_tokens: 1_000, completion_tokens: 100 };
const script = [
  { toolCalls: [call('set_value', { key: 'plan', value: 'pro' })], usage },
  { content: 'Done.', usage },
];
// The first call costs $0.00021: the second is held.
const settings = { model: 'gpt-4o-mini', budget: { maxCostUsd: 0.0002, onCostLimit: 'pause' } };

async function decideHeld(context, decide) {
  const handle = await startQueued(context, ['Put Ada on the pro plan.'], settings);
  await decide(await pendingApproval(handle));
  await finishAndRecord(context, handle);
}

export const budgetPauseScenarios = {
  'budget-pause-approved': {
    description:
      "`budget.onCostLimit: pause`: the turn's second model call is held; `approve` with `maxCostUsd` raises the limit",
    script,
    run: (context) =>
      decideHeld(context, (held) => context.client.approve(context.id, held.callId, { maxCostUsd: 0.01, by: 'ops' })),
  },
  'budget-pause-denied': {
    description:
      '`budget.onCostLimit: pause`: the held call is denied; the turn ends with `budget:cost` and `budgetDenied`',
    script,
    run: (context) =>
      decideHeld(context, (held) =>
        context.client.deny(context.id, held.callId, { reason: 'Over budget.', by: 'ops' }),
      ),
  },
};
