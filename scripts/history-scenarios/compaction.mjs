// Compaction (docs/models.md#compaction): a conversation whose transcript passes 80% of a small window
// (`settings.contextWindow`) has its older turns summarized by a `summarizeTranscript` activity before the model call.
// The scripted model answers every call, summary calls included, with the same short text.
import { answerQueued, openActivities, startQueued } from './drive.mjs';

/** About 300 estimated tokens each: two of them pass 80% of a 1,000-token window with the test server's tools. */
const message = (day) =>
  `On day ${day} the code word is ${['amber', 'basalt', 'cobalt', 'dune', 'ember', 'fjord'][day - 1]}. ` +
  'Remember it, along with everything I said before. '.repeat(24);
const messages = (count) => Array.from({ length: count }, (_, index) => message(index + 1));
const answers = (count) => Array.from({ length: count }, () => ({ content: 'Noted.' }));
const settings = { contextWindow: 1_000 };

export const compactionScenarios = {
  compaction: {
    description: 'three queued messages over a 1,000-token window: the older turns summarized before a model call',
    script: answers(8),
    run: (context) => answerQueued(context, messages(3), settings),
  },
  'tenant-compaction': {
    description:
      "a tenant's three queued messages over a 1,000-token window: each summary call's cost goes to the tenant's " +
      'ledger too, a local activity after the call (patch `summary-spend-ledger`)',
    script: answers(8),
    run: (context) => answerQueued(context, messages(3), { ...settings, tenant: 'acme' }),
  },
  'compaction-continue-as-new': {
    description:
      'six queued messages over a 1,000-token window with `maxTurnsPerRun: 2`: summaries made in one run and ' +
      'carried by continue-as-new into the next',
    script: answers(16),
    run: (context) => answerQueued(context, messages(6), { ...settings, maxTurnsPerRun: 2 }),
  },
  'compaction-interrupted': {
    description:
      'taken while the summary call runs (its activity started, no result yet); then `interrupt` cancels it and ' +
      'the turn, and `end`',
    script: [{ content: 'Noted.' }, { content: 'Noted.', delayMs: 5_000 }, ...answers(4)],
    async run(context) {
      const handle = await startQueued(context, messages(2), settings);
      await context.capture('mid-summary', (history) => openActivities(history, 'summarizeTranscript') === 1);
      await context.client.interrupt(context.id, { reason: 'not now' });
      await handle.result();
      context.record(handle.firstExecutionRunId);
    },
  },
};
