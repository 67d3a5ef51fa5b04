import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/shared/types.js';
import type { TestAgent } from '../../src/testing/agent.js';
import { startScriptedModel } from '../../src/testing/scripted-model/index.js';
import { askUpdate, type ConversationState } from '../../src/workflows/definitions.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';

const bed = useTimeSkippingWithCrm();

const { agentWith } = bed;

/** A conversation state with `count` earlier messages of about 300 characters each. */
function stateWith(count: number): ConversationState {
  const transcript: ChatMessage[] = Array.from({ length: count }, (_, index) =>
    index % 2 === 0
      ? { role: 'user', content: `Question ${index}: ${'lorem ipsum '.repeat(25)}`, id: `old-${index}` }
      : { role: 'assistant', content: `Answer ${index}: ${'dolor sit amet '.repeat(20)}` },
  );
  return { transcript, transcriptOffset: 0, turns: count / 2, queue: [], seenMessageIds: [] };
}

interface ModelCallSize {
  inputBytes: number;
  newContentBytes: number;
}

/** Bytes of each callModel activity's input in the history, and of the new messages it carried. */
async function modelCallSizes(agent: TestAgent, workflowId: string): Promise<ModelCallSize[]> {
  const history = await agent.env.client.workflow.getHandle(workflowId).fetchHistory();
  const sizes: ModelCallSize[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (event.eventType !== temporal.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) continue;
    if (scheduled?.activityType?.name !== 'callModel') continue;
    const payloads = scheduled.input?.payloads ?? [];
    const inputBytes = payloads.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0);
    const input = JSON.parse(Buffer.from(payloads[0]!.data!).toString('utf8')) as { newMessages: ChatMessage[] };
    sizes.push({ inputBytes, newContentBytes: Buffer.byteLength(JSON.stringify(input.newMessages)) });
  }
  return sizes;
}

describe('history grows with new content, not with the transcript', () => {
  it.each([10, 200])(
    'each model call adds at most 2 KB beyond its new content, with %i earlier messages',
    async (count) => {
      const agent = await agentWith([
        { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] },
        { content: 'Ada is user u-1.' },
      ]);
      const handle = await agent.startConversation(`history-${count}`, { state: stateWith(count) });
      const result = await handle.executeUpdate(askUpdate, { args: [{ id: 'q', content: 'Who is Ada?' }] });
      expect(result).toMatchObject({ stopReason: 'completed', rounds: 2 });

      // The model still saw the whole conversation, rebuilt by the worker from the workflow (a query), not history.
      expect(agent.model.requests[0]?.messages).toHaveLength(count + 1);
      expect(agent.model.requests[1]?.messages).toHaveLength(count + 3);

      const sizes = await modelCallSizes(agent, handle.workflowId);
      expect(sizes).toHaveLength(2);
      for (const size of sizes) expect(size.inputBytes - size.newContentBytes).toBeLessThanOrEqual(2048);
      console.log(`history bytes per model call with ${count} earlier messages:`, JSON.stringify(sizes));
    },
  );

  it('a fresh worker rebuilds the transcript it never saw from the workflow (a cache miss)', async () => {
    const model = await startScriptedModel({ script: [{ content: 'first answer' }, { content: 'second answer' }] });
    bed.onCleanup(() => model.close());
    // No workflow cache on the first worker: its workflow tasks are not sticky, so the second worker can take over.
    const first = await agentWith(undefined, { model, workerOptions: { worker: { maxCachedWorkflows: 0 } } });
    const handle = await first.startConversation('cache-miss');
    await handle.executeUpdate(askUpdate, { args: [{ id: 'one', content: 'first question' }] });
    await first.close();

    const second = await agentWith(undefined, { model, taskQueue: first.taskQueue });
    const result = await handle.executeUpdate(askUpdate, { args: [{ id: 'two', content: 'second question' }] });
    expect(result.answer).toBe('second answer');
    expect(second.model.requests[1]?.messages.map((message) => message.content)).toEqual([
      'first question',
      'first answer',
      'second question',
    ]);
  });

  it('trims the model input to maxInputTokens by dropping the oldest whole turns', async () => {
    const agent = await agentWith([{ content: 'a1' }, { content: 'a2' }, { content: 'a3' }]);
    // About 8 tokens for the system prompt, 56 per long message, 5 per answer (see estimateTokens): 187 in all.
    const settings = { systemPrompt: 'You are terse.', maxInputTokens: 130 };
    const handle = await agent.startConversation('trim', { settings });
    const long = (label: string) => `${label} ${'x'.repeat(200)}`;
    for (const [index, label] of ['one', 'two', 'three'].entries()) {
      await handle.executeUpdate(askUpdate, { args: [{ id: `m${index}`, content: long(label) }] });
    }
    const lastRequest = agent.model.requests[2]!;
    expect(lastRequest.messages[0]).toEqual({ role: 'system', content: 'You are terse.' });
    const contents = lastRequest.messages.slice(1).map((message) => (message.content as string).split(' ')[0]);
    // 'one' and its answer were dropped together; the current turn is always kept.
    expect(contents).toEqual(['two', 'a2', 'three']);
  });
});
