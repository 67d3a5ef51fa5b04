// Each byte once in history (docs/architecture.md, "Each byte once in history"): the tool results a round returned are named by the
// next model call instead of carried in it, and a later turn's listing names the tool list recorded before. Every
// scenario records whole runs (state `finished`).
import { ask, call, endAndRecord } from './drive.mjs';

export const recordedOnceScenarios = {
  'tool-results-once': {
    description:
      'two turns of large tool results (two parallel `big` calls, then one): each result recorded once, by its ' +
      "call; the second turn's listing names the first turn's tool list by digest; then `end`",
    script: [
      { toolCalls: [call('big', { chars: 3000 }), call('big', { chars: 2000, unit: 'abc' })] },
      { toolCalls: [call('echo', { text: 'after the files' })] },
      { content: 'Read both files.' },
      { toolCalls: [call('big', { chars: 2500 })] },
      { content: 'Read it again.' },
    ],
    async run(context) {
      const handle = await context.start({});
      await ask(handle, 'm-1', 'Read the two files.');
      await ask(handle, 'm-2', 'Read the first one again.');
      await endAndRecord(context, handle);
    },
  },
};
