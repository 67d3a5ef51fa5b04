import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CARRIED_STATE_FORMAT, CarriedStateFormatError, readCarriedState } from '../../src/workflows/carried-state.js';
import { ConversationCore } from '../../src/workflows/conversation-core.js';
import type { ConversationInput, ConversationState } from '../../src/workflows/definitions.js';

/**
 * The state release 0.1.0 carried across continue-as-new, as its recorded history holds it (the fixture is read, never
 * written): format 1 has no `formatVersion`.
 */
function releasedState(): ConversationState {
  const history = JSON.parse(
    readFileSync(new URL('../fixtures/histories/continue-as-new.run-1.json', import.meta.url), 'utf8'),
  ) as { events: { workflowExecutionContinuedAsNewEventAttributes?: { input: { payloads: { data: string }[] } } }[] };
  const continued = history.events.find((event) => event.workflowExecutionContinuedAsNewEventAttributes);
  const [payload] = continued!.workflowExecutionContinuedAsNewEventAttributes!.input.payloads;
  const input = JSON.parse(Buffer.from(payload!.data, 'base64').toString('utf8')) as ConversationInput;
  return input.state!;
}

const hooks = { continueAsNewSuggested: () => false, changed: () => undefined, warn: () => undefined };

describe('readCarriedState', () => {
  it('carried state: format 1 (release 0.1.0, no formatVersion) is read whole, as the current format', () => {
    const released = releasedState();
    expect(released.formatVersion).toBeUndefined();

    const read = readCarriedState(released);

    expect(read).toEqual({ ...released, formatVersion: CARRIED_STATE_FORMAT });
    expect(read.queue).toEqual([{ id: 'm-2', content: 'two' }]);
  });

  it('carried state: format 2 (no cost) is read whole, as the current format', () => {
    const state: ConversationState = { ...releasedState(), formatVersion: 2, allowedTools: ['crm__lookup'] };

    expect(readCarriedState(state)).toEqual({ ...state, formatVersion: CARRIED_STATE_FORMAT });
  });

  it('carried state: format 3 (no window, no summaries) is read whole, with what the conversation spent', () => {
    const state: ConversationState = { ...releasedState(), formatVersion: 3, cost: { usd: 0.25, lastInputUsd: 0.01 } };

    expect(readCarriedState(state)).toEqual({ ...state, formatVersion: CARRIED_STATE_FORMAT });
  });

  it("carried state: format 4 is read as it is, with the model's window and a summary in the transcript", () => {
    const released = releasedState();
    const summary: ConversationState['transcript'][number] = {
      role: 'system',
      content: '- The user is Ada.',
      compaction: { from: 0, to: 2, verbatim: 0, reason: 'window', tokensBefore: 900 },
    };
    const state: ConversationState = {
      ...released,
      formatVersion: 4,
      transcript: [summary, ...released.transcript],
      contextWindow: { model: 'gpt-4o', learned: { model: 'gpt-4o', tokens: 6_000 }, toolTokens: 120 },
    };

    expect(readCarriedState(state)).toEqual(state);
  });

  it('carried state: no state (a new conversation) stays none', () => {
    expect(readCarriedState(undefined)).toBeUndefined();
  });

  it('carried state: a format newer than this release reads is refused, naming the formats it reads', () => {
    const newer = { ...releasedState(), formatVersion: CARRIED_STATE_FORMAT + 1 };

    expect(() => readCarriedState(newer)).toThrow(CarriedStateFormatError);
    expect(() => readCarriedState(newer)).toThrow(
      `The carried conversation state has format ${CARRIED_STATE_FORMAT + 1}; this release reads formats 1 to ${CARRIED_STATE_FORMAT}.`,
    );
    expect(() => readCarriedState({ ...releasedState(), formatVersion: 0 })).toThrow(CarriedStateFormatError);
  });

  it('carried state: a run reads a 0.1.0 state and hands on the current format', () => {
    const released = releasedState();
    const conversation = new ConversationCore(
      { conversationId: 'replay-continue-as-new', state: released, previousRunId: 'run-1' },
      hooks,
    );

    expect(conversation.queued).toBe(1);
    expect(conversation.status().turns).toBe(1);
    const handed = conversation.state();
    expect(handed.formatVersion).toBe(CARRIED_STATE_FORMAT);
    expect(handed).toMatchObject({
      transcript: released.transcript,
      turns: released.turns,
      queue: released.queue,
      seenMessageIds: released.seenMessageIds,
      streamOffset: released.streamOffset,
    });
  });
});
