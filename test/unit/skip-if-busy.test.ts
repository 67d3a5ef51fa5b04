import { describe, expect, it } from 'vitest';
import { ConversationCore } from '../../src/workflows/conversation-core.js';

/** A conversation whose `mayDropBusyMessage` hook answers `mayDrop` (the workflow: `patched('skip-if-busy')`). */
function conversation(mayDrop?: boolean) {
  const warnings: string[] = [];
  const core = new ConversationCore(
    { conversationId: 'c1' },
    {
      continueAsNewSuggested: () => false,
      changed: () => undefined,
      warn: (message) => warnings.push(message),
      ...(mayDrop === undefined ? {} : { mayDropBusyMessage: () => mayDrop }),
    },
  );
  return { core, warnings };
}

const tick = (id: string) => ({ id, content: 'Tick.', skipIfBusy: true });

describe('skipIfBusy messages', () => {
  it('skipIfBusy: queued when the conversation is idle', () => {
    const { core } = conversation();
    core.receive(tick('t1'));
    expect(core.queued).toBe(1);
  });

  it('skipIfBusy: dropped while a message waits or a turn runs, and the same id sent again is still dropped', () => {
    const { core, warnings } = conversation();
    core.receive({ id: 'm1', content: 'Hello.' });
    core.receive(tick('t1'));
    expect(core.queued).toBe(1);
    core.startTurn(core.nextMessage()!, () => undefined);
    core.receive(tick('t2'));
    expect(core.queued).toBe(0);
    expect(warnings).toEqual([expect.stringMatching(/skipped a message/), expect.stringMatching(/skipped a message/)]);
    // A retried firing once the turn is over: its id was seen, so it is not queued late.
    core.finishTurn({
      conversationId: 'c1',
      turn: 1,
      messageId: 'm1',
      answer: 'Hi.',
      stopReason: 'completed',
      rounds: 1,
      toolCalls: 0,
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      durationMs: 1,
    });
    core.receive(tick('t2'));
    expect(core.queued).toBe(0);
  });

  it('skipIfBusy: queued like any message while busy when the patch is absent (a history an older release recorded)', () => {
    const { core } = conversation(false);
    core.receive({ id: 'm1', content: 'Hello.' });
    core.receive(tick('t1'));
    expect(core.queued).toBe(2);
  });

  it('skipIfBusy: a message without it is queued while busy, as always', () => {
    const { core } = conversation();
    core.receive({ id: 'm1', content: 'Hello.' });
    core.receive({ id: 'm2', content: 'And this.' });
    expect(core.queued).toBe(2);
  });
});
