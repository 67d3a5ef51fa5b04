import { describe, expect, it } from 'vitest';
import type { Script } from '../../src/testing/scripted-model/index.js';
import { askUpdate, endSignal } from '../../src/workflows/definitions.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { collectTurn, historySize } from './helpers.js';

const bed = useTimeSkippingWithCrm();

/** A typical agent turn: a sentence and a tool call, then an answer of `words` words written at 50 words a second. */
function turnScript(words: number): Script {
  const answer = Array.from({ length: words }, (_, index) => `word${index}`).join(' ');
  return [
    {
      content: 'Let me look that up in the CRM.',
      toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }],
      chunkDelayMs: 20,
    },
    { content: `Ada Lovelace is user u-1. ${answer}`, chunkDelayMs: 20 },
  ];
}

/** History bytes of a conversation run with one turn, streamed (with one subscriber) or not. */
async function measure(conversationId: string, words: number, stream: boolean) {
  const agent = await bed.agentWith(turnScript(words));
  const handle = await agent.startConversation(conversationId, { settings: { stream } });
  const subscription = stream ? collectTurn(bed.env.client, conversationId) : Promise.resolve([]);
  await handle.executeUpdate(askUpdate, { args: [{ id: 'q-1', content: 'Who is Ada?' }] });
  const events = await subscription;
  await handle.signal(endSignal);
  await handle.result();
  return { ...(await historySize(bed.env.client, handle.workflowId)), streamEvents: events.length };
}

describe('streaming: history budget', () => {
  it.each([80, 300])(
    'budget: a streamed turn of %i words with one subscriber stays within 3x the history bytes of a non-streamed one',
    async (words) => {
      const plain = await measure(`budget-plain-${words}`, words, false);
      const streamed = await measure(`budget-streamed-${words}`, words, true);
      const ratio = streamed.bytes / plain.bytes;
      console.log(
        `history of a ${words}-word turn: not streamed ${plain.bytes} B / ${plain.events} events; ` +
          `streamed with one subscriber ${streamed.bytes} B / ${streamed.events} events ` +
          `(${streamed.streamEvents} stream events); ratio ${ratio.toFixed(2)}`,
      );
      expect(ratio).toBeLessThanOrEqual(3);
    },
  );
});
