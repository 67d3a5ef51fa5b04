import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import { ZERO_USAGE } from '../../src/shared/types.js';
import { ConversationCore, type ConversationTurn, RECENT_RESULTS } from '../../src/workflows/conversation-core.js';
import { MAX_CARRIED_RESULTS_BYTES, MAX_PAGE_BYTES, page } from '../../src/workflows/conversation-state.js';
import type { ConversationInput, IncomingMessage } from '../../src/workflows/definitions.js';
import type { TurnResult } from '../../src/workflows/turn-result.js';

/** A conversation with hooks that record what it reports, and a switch for Temporal's continue-as-new suggestion. */
function conversation(input: Partial<ConversationInput> = {}) {
  const hooks = {
    suggested: false,
    changes: 0,
    warnings: [] as { message: string; attributes: Record<string, unknown> }[],
  };
  const core = new ConversationCore(
    { conversationId: 'c1', ...input },
    {
      continueAsNewSuggested: () => hooks.suggested,
      changed: () => hooks.changes++,
      warn: (message, attributes) => hooks.warnings.push({ message, attributes }),
    },
  );
  return { core, hooks };
}

function message(id: string, content = `question ${id}`): IncomingMessage {
  return { id, content };
}

function resultFor(turn: ConversationTurn, overrides: Partial<TurnResult> = {}): TurnResult {
  return {
    conversationId: turn.conversationId,
    turn: turn.turn,
    messageId: turn.messageId,
    answer: `answer ${turn.messageId}`,
    stopReason: 'completed',
    rounds: 1,
    toolCalls: 0,
    usage: ZERO_USAGE,
    durationMs: 10,
    ...overrides,
  };
}

/** Answer the next queued message as the workflow would, with `overrides` in the result. */
function answerNext(core: ConversationCore, overrides: Partial<TurnResult> = {}): TurnResult {
  const next = core.nextMessage();
  if (next === undefined) throw new Error('nothing to answer');
  const turn = core.startTurn(next, () => undefined);
  const result = resultFor(turn, overrides);
  core.finishTurn(result);
  return result;
}

/** A `wait` that resolves when the test says so, and records whether its condition held then. */
function manualWait() {
  let release: () => void = () => undefined;
  let settled: () => boolean = () => false;
  const wait = (condition: () => boolean) =>
    new Promise<void>((resolve) => {
      settled = condition;
      release = resolve;
    });
  return { wait, settled: () => settled(), release: () => release() };
}

function failureType(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof ApplicationFailure ? (error.type ?? undefined) : 'not an ApplicationFailure';
  }
  return undefined;
}

describe('ConversationCore: the queue', () => {
  it('conversation: starts idle with the system prompt as its transcript and the start messages queued', () => {
    const { core } = conversation({ settings: { systemPrompt: 'Be brief.' }, messages: [message('m1')] });

    expect(core.phase).toBe('idle');
    expect(core.queued).toBe(1);
    expect(core.hasWork).toBe(true);
    expect(core.transcript.messages).toEqual([{ role: 'system', content: 'Be brief.' }]);
  });

  it('conversation: a message delivered twice is queued once, and only the first delivery is reported', () => {
    const { core, hooks } = conversation();
    core.receive(message('m1'));
    core.receive(message('m1'));

    expect(core.queued).toBe(1);
    expect(hooks.changes).toBe(1);
  });

  it('conversation: an invalid signalled message and one after the end are ignored with a warning', () => {
    const { core, hooks } = conversation();
    core.receive({ id: '', content: 'x' });
    core.end();
    core.receive(message('m1'));

    expect(core.queued).toBe(0);
    expect(hooks.warnings.map((warning) => warning.message)).toEqual([
      'ignored an invalid userMessage signal',
      'ignored a message sent after the conversation ended',
    ]);
    expect(hooks.warnings[1]?.attributes).toEqual({ messageId: 'm1' });
  });

  it('conversation: messages are answered in the order they came, each one turn', () => {
    const { core } = conversation({ messages: [message('m1')] });
    core.receive(message('m2'));

    const first = answerNext(core);
    const second = answerNext(core);

    expect([first.turn, first.messageId, second.turn, second.messageId]).toEqual([1, 'm1', 2, 'm2']);
    expect(core.nextMessage()).toBeUndefined();
    expect(core.transcript.messages.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual([
      'question m1',
      'question m2',
    ]);
  });

  it('conversation: a message carried from the previous run is answered without being deduplicated again', () => {
    const { core } = conversation({
      state: { transcript: [], transcriptOffset: 0, turns: 3, queue: [message('m4')], seenMessageIds: ['m4'] },
    });

    expect(core.nextMessage()).toEqual(message('m4'));
  });
});

describe('ConversationCore: turns', () => {
  it('conversation: a running turn is in the phase, the status and the stream', () => {
    const { core } = conversation({ messages: [message('m1')] });
    const turn = core.startTurn(core.nextMessage()!, () => undefined);

    expect(turn).toMatchObject({ conversationId: 'c1', turn: 1, messageId: 'm1', transcript: core.transcript });
    expect(core.phase).toBe('running');
    expect(core.status()).toMatchObject({ phase: 'running', turns: 1, queued: 0 });
    expect(core.events.read(0).events).toEqual([{ type: 'turn_started', turn: 1, messageId: 'm1', offset: 0 }]);
  });

  it('conversation: the turn observer writes stream events, progress and the tools', () => {
    const { core, hooks } = conversation({ messages: [message('m1')] });
    const { observer } = core.startTurn(core.nextMessage()!, () => undefined);
    const tool = {
      name: 'files__read',
      description: '',
      inputSchema: {},
      annotations: {},
      server: 'files',
      originalName: 'read',
      timeoutMs: 1_000,
    };
    const call = { id: 'call_1', name: 'files__read', arguments: `{"path":"${'x'.repeat(300)}"}` };

    observer.modelCallStarted(1);
    observer.toolsListed([tool], 'digest-1');
    observer.modelCallFinished(undefined);
    observer.progress({ spend: { rounds: 1, toolCalls: 0, usage: ZERO_USAGE, startedAt: 0 }, activity: 'tools' });
    observer.toolStarted(call);
    observer.toolFinished({ role: 'tool', toolCallId: 'call_1', name: 'files__read', outcome: 'ok', content: 'ok' }, 7);

    const events = core.events.read(0).events.map(({ offset: _offset, ...event }) => event);
    expect(events.map((event) => event.type)).toEqual([
      'turn_started',
      'model_attempt_started',
      'tool_call_started',
      'tool_call_finished',
    ]);
    expect(events[2]).toMatchObject({ turn: 1, toolCallId: 'call_1', name: 'files__read' });
    expect((events[2] as { arguments: string }).arguments).toHaveLength(200);
    expect(events[3]).toEqual({
      type: 'tool_call_finished',
      turn: 1,
      toolCallId: 'call_1',
      name: 'files__read',
      outcome: 'ok',
      preview: 'ok',
      durationMs: 7,
    });
    expect(hooks.changes).toBe(1);
    expect(core.status().currentTurn).toMatchObject({ turn: 1, messageId: 'm1', rounds: 1, activity: 'tools' });
    expect(core.modelContext({ from: 0, limit: 10 })).toMatchObject({ tools: [tool], toolsDigest: 'digest-1' });
  });

  it('conversation: interrupt cancels the running turn once, tells the observer and notes it in the transcript', () => {
    const { core } = conversation({ messages: [message('m1')] });
    core.interrupt('nothing runs yet');
    let cancels = 0;
    const turn = core.startTurn(core.nextMessage()!, () => cancels++);

    expect(turn.observer.interrupted()).toBe(false);
    core.interrupt('changed my mind');
    expect(cancels).toBe(1);
    expect(turn.observer.interrupted()).toBe(true);

    core.finishTurn(resultFor(turn, { stopReason: 'cancelled', answer: null }));
    expect(core.transcript.messages.at(-1)).toEqual({
      role: 'assistant',
      content: '[The user interrupted this turn: changed my mind.]',
    });
    expect(core.phase).toBe('idle');
  });

  it('conversation: a finished turn is the last result, in the status and a turn_finished event without the id', () => {
    const { core } = conversation({ messages: [message('m1')] });
    const result = answerNext(core);

    expect(core.status()).toMatchObject({ phase: 'idle', turns: 1, lastResult: result });
    expect(core.status()).not.toHaveProperty('currentTurn');
    const { conversationId: _id, ...finished } = result;
    expect(core.events.read(0).events.at(-1)).toEqual({ type: 'turn_finished', ...finished, offset: 1 });
  });
});

describe('ConversationCore: ask', () => {
  it('ask: queues the message and resolves with its turn result', async () => {
    const { core, hooks } = conversation();
    const { wait, settled, release } = manualWait();
    const asked = core.ask(message('m1'), wait);

    expect(core.queued).toBe(1);
    expect(core.asksWaiting).toBe(true);
    expect(hooks.changes).toBe(1);
    expect(settled()).toBe(false);
    const result = answerNext(core);
    expect(settled()).toBe(true);
    release();

    await expect(asked).resolves.toBe(result);
    expect(core.asksWaiting).toBe(false);
  });

  it('ask: a retried ask returns the earlier result without a new turn', async () => {
    const { core } = conversation({ messages: [message('m1')] });
    const result = answerNext(core);

    await expect(core.ask(message('m1'), () => Promise.reject(new Error('must not wait')))).resolves.toBe(result);
    expect(core.queued).toBe(0);
  });

  it('ask: a retry of a message still queued or running waits for the same turn', async () => {
    const { core } = conversation({ messages: [message('m1')] });
    const { wait, release } = manualWait();
    const asked = core.ask(message('m1'), wait);

    expect(core.queued).toBe(1);
    const result = answerNext(core);
    release();
    await expect(asked).resolves.toBe(result);
  });

  it('ask: a message answered so long ago that its result is gone is refused as InvalidMessage', async () => {
    const { core } = conversation({ messages: [message('old')] });
    answerNext(core);
    for (let index = 0; index < RECENT_RESULTS; index++) {
      core.receive(message(`m${index}`));
      answerNext(core);
    }

    await expect(core.ask(message('old'), () => Promise.resolve())).rejects.toMatchObject({
      type: FailureType.InvalidMessage,
    });
  });

  it('ask: an ask waiting when the conversation ends fails as ConversationEnded', async () => {
    const { core } = conversation();
    const { wait, settled, release } = manualWait();
    const asked = core.ask(message('m1'), wait);
    core.end();

    expect(settled()).toBe(true);
    release();
    await expect(asked).rejects.toMatchObject({ type: FailureType.ConversationEnded });
  });

  it('ask validator: rejects bad input, asks after the end, and new asks only while handing over', () => {
    const { core, hooks } = conversation({ messages: [message('m1')] });
    const result = answerNext(core);

    expect(failureType(() => core.validateAsk({ id: 'x', content: '' }))).toBe(FailureType.InvalidMessage);
    expect(failureType(() => core.validateAsk(message('m2')))).toBeUndefined();
    hooks.suggested = true;
    // The rollover is due, but the run has not handed over yet: the ask is taken (and carried, see below).
    expect(core.rollingOver).toBe(true);
    expect(failureType(() => core.validateAsk(message('m2')))).toBeUndefined();
    core.handOver();
    expect(failureType(() => core.validateAsk(message('m2')))).toBe(FailureType.ConversationRollingOver);
    // A retry of an answered ask is still answered from the recent results.
    expect(failureType(() => core.validateAsk(message(result.messageId)))).toBeUndefined();
    core.end();
    expect(failureType(() => core.validateAsk(message('m3')))).toBe(FailureType.ConversationEnded);
  });
});

describe('ConversationCore: rolling over and closing', () => {
  it('rollover: after maxTurnsPerRun turns the run rolls over and answers nothing by signal', () => {
    const { core } = conversation({ settings: { maxTurnsPerRun: 1 }, messages: [message('m1'), message('m2')] });
    answerNext(core);

    expect(core.rollingOver).toBe(true);
    expect(core.hasWork).toBe(true);
    expect(core.nextMessage()).toBeUndefined();
    expect(core.state().queue).toEqual([message('m2')]);
  });

  it('rollover: while rolling over, messages up to the last one an ask waits for are still answered', () => {
    const { core, hooks } = conversation({ messages: [message('m1')] });
    void core.ask(message('m2'), () => new Promise(() => undefined));
    core.receive(message('m3'));
    hooks.suggested = true;

    answerNext(core);
    expect(core.asksWaiting).toBe(true);
    expect(answerNext(core).messageId).toBe('m2');
    // m3 came by signal: it goes to the next run.
    expect(core.asksWaiting).toBe(false);
    expect(core.nextMessage()).toBeUndefined();
    expect(core.state().queue).toEqual([message('m3')]);
  });

  it('rollover: an ask that comes while the rollover is due is carried, and fails as rolling over at the handover', async () => {
    const { core, hooks } = conversation({ settings: { maxTurnsPerRun: 1 }, messages: [message('m1')] });
    const turn = core.startTurn(core.nextMessage()!, () => undefined);
    // The run's last turn is under way: the ask is taken, but it will not be answered by this run.
    expect(core.rollingOver).toBe(true);
    const wait = manualWait();
    const asked = core.ask(message('m2'), wait.wait);
    core.receive(message('m3'));
    core.finishTurn(resultFor(turn));

    expect(core.asksWaiting).toBe(false);
    expect(core.nextMessage()).toBeUndefined();
    expect(wait.settled()).toBe(false);
    core.handOver();
    expect(wait.settled()).toBe(true);
    wait.release();
    await expect(asked).rejects.toMatchObject({ type: FailureType.ConversationRollingOver, nonRetryable: false });
    // Both messages go to the next run, in the order they came; a retried ask there finds its message queued.
    expect(core.state().queue).toEqual([message('m2'), message('m3')]);
    const next = conversation({ state: core.state() }).core;
    void next.ask(message('m2'), () => new Promise(() => undefined));
    expect(next.state().queue).toEqual([message('m2'), message('m3')]);
    expect(answerNext(next).messageId).toBe('m2');
    expect(hooks.warnings).toEqual([]);
  });

  it('rollover: an ask retried after the run that answered it rolled over gets the answer from the carried results', async () => {
    const { core } = conversation({ settings: { maxTurnsPerRun: 1 }, messages: [message('m1')] });
    const answered = answerNext(core);
    const next = conversation({ state: core.state() }).core;

    expect(failureType(() => next.validateAsk(message('m1')))).toBeUndefined();
    expect(await next.ask(message('m1'), () => Promise.reject(new Error('no wait expected')))).toEqual(answered);
    // Only as many as fit: a huge answer is not carried (its ask then says so instead).
    const { core: big } = conversation({ messages: [message('m2')] });
    answerNext(big, { answer: 'x'.repeat(MAX_CARRIED_RESULTS_BYTES) });
    expect(big.state().recentResults).toEqual([]);
  });

  it('state: carries the transcript, turns, queue, remembered ids, last result and the stream position', () => {
    const { core } = conversation({ messages: [message('m1')] });
    const result = answerNext(core);
    core.receive(message('m2'));

    const state = core.state();
    expect(state).toMatchObject({
      transcriptOffset: 0,
      turns: 1,
      queue: [message('m2')],
      seenMessageIds: ['m1', 'm2'],
      lastResult: result,
      streamOffset: 2,
    });
    expect(state.transcript.map((entry) => entry.role)).toEqual(['user']);
    expect(state.streamEvents?.map((event) => event.type)).toEqual(['turn_started', 'turn_finished']);

    const next = conversation({ state, previousRunId: 'run-1' }).core;
    expect(next.status()).toMatchObject({ turns: 1, queued: 1, transcriptLength: 1, lastResult: result });
    expect(next.transcriptPage(undefined)).toMatchObject({ from: 0, total: 1, previousRunId: 'run-1' });
  });

  it('close: an ended conversation leaves its stream events behind; an idle close keeps them', () => {
    const idle = conversation({ messages: [message('m1')] }).core;
    answerNext(idle);
    const ended = conversation({ messages: [message('m1')] }).core;
    answerNext(ended);
    ended.end();

    expect(idle.close('idle')).toMatchObject({ conversationId: 'c1', closedBecause: 'idle' });
    expect(idle.close('idle').state.streamEvents).toHaveLength(2);
    const outcome = ended.close('ended');
    expect(outcome.state).not.toHaveProperty('streamEvents');
    expect(outcome.state.streamOffset).toBe(2);
    expect(ended.phase).toBe('ended');
  });

  it('close: the outcome carries what reopening needs: the settings and whether the run was a one-shot', () => {
    const settings = { systemPrompt: 'Be brief.', idleTimeoutMs: 1_000 };
    const idle = conversation({ settings, messages: [message('m1')] }).core;
    answerNext(idle);
    expect(idle.close('idle')).toMatchObject({ settings, state: { turns: 1 } });
    expect(idle.close('idle')).not.toHaveProperty('closeWhenIdle');
    const oneShot = conversation({ closeWhenIdle: true, messages: [message('m1')] }).core;
    answerNext(oneShot);
    expect(oneShot.close('completed')).toMatchObject({ closeWhenIdle: true, settings: {} });
  });

  it('close: an ended conversation’s state says so; a run started from it takes nothing and ends at once', () => {
    const ended = conversation({ messages: [message('m1')] }).core;
    answerNext(ended);
    ended.end();
    const { state } = ended.close('ended');
    expect(state).toMatchObject({ ended: true, turns: 1, seenMessageIds: ['m1'] });

    const { core, hooks } = conversation({ state, previousRunId: 'run-1' });
    expect(core.phase).toBe('ended');
    expect(core.hasWork).toBe(true);
    expect(failureType(() => core.validateAsk(message('m2')))).toBe(FailureType.ConversationEnded);
    core.receive(message('m2'));
    expect(core.queued).toBe(0);
    expect(hooks.warnings.map((warning) => warning.message)).toEqual([
      'ignored a message sent after the conversation ended',
    ]);
    expect(core.transcriptPage(undefined)).toMatchObject({ total: 1, previousRunId: 'run-1' });
    expect(core.close('ended').state).toMatchObject({ ended: true, turns: 1, seenMessageIds: ['m1'] });
  });
});

describe('ConversationCore: transcript pages', () => {
  const carried = {
    transcript: Array.from({ length: 5 }, (_, index) => ({ role: 'user' as const, content: `m${index + 10}` })),
    transcriptOffset: 10,
    turns: 5,
    queue: [],
    seenMessageIds: [],
  };

  it('transcript page: indexes are the whole conversation, starting no earlier than this run holds', () => {
    const { core } = conversation({ state: carried, previousRunId: 'run-0' });

    expect(core.transcriptPage({ from: 0, limit: 2 })).toEqual({
      from: 10,
      messages: carried.transcript.slice(0, 2),
      total: 15,
      offset: 10,
      previousRunId: 'run-0',
    });
    expect(core.transcriptPage({ from: 13 }).messages).toEqual(carried.transcript.slice(3));
    expect(core.transcriptPage({ from: 12, limit: 0 }).messages).toHaveLength(1);
  });

  it('model context: indexes are this run’s', () => {
    const { core } = conversation({ state: carried });

    expect(core.modelContext({ from: 3, limit: 10 })).toEqual({
      from: 3,
      messages: carried.transcript.slice(3),
      total: 5,
      tools: undefined,
      toolsDigest: undefined,
    });
  });

  it('page: stops before the item that would pass the size limit, but always returns at least one', () => {
    const items = ['a'.repeat(10), 'b'.repeat(10), 'c'.repeat(10)];

    expect(page(items, 0, 10, 30)).toEqual(items.slice(0, 2));
    expect(page(items, 0, 10, 5)).toEqual(items.slice(0, 1));
    expect(page(items, -3, 2)).toEqual(items.slice(0, 2));
    // Bytes of JSON, not characters: Temporal limits a query's answer in bytes.
    const chinese = ['字'.repeat(10), '字'.repeat(10)];
    expect(page(chinese, 0, 10, 40)).toEqual(chinese.slice(0, 1));
    expect(MAX_PAGE_BYTES).toBeLessThan(2 * 1024 * 1024);
  });
});

describe('what the conversation spent', () => {
  it('cost: the turn records each call in the conversation: status, turn_finished and the carried state show it', () => {
    const { core } = conversation({ messages: [message('m1')] });
    const turn = core.startTurn(core.nextMessage()!, () => undefined);
    turn.costs.record({ priced: true, usd: 0.5, inputUsd: 0.1, source: 'configured' });
    turn.costs.record({ priced: false, usd: null, reason: 'no price' });

    expect(core.status().cost).toEqual({ usd: 0.5, unpricedCalls: 1 });
    const cost = { usd: 0.5, unpricedCalls: 1 };
    core.finishTurn(resultFor(turn, { cost, conversationCost: cost }));
    expect(core.events.read(0).events.at(-1)).toMatchObject({ type: 'turn_finished', cost, conversationCost: cost });

    const carried = core.state();
    expect(carried.cost).toEqual({ usd: 0.5, unpricedCalls: 1, lastInputUsd: 0.1 });
    const next = conversation({ state: carried, messages: [message('m2')] }).core;
    expect(next.status().cost).toEqual({ usd: 0.5, unpricedCalls: 1 });
  });

  it('cost: a conversation that has recorded no cost carries none, and its status says it spent nothing', () => {
    const { core } = conversation();
    expect(core.state().cost).toBeUndefined();
    expect(core.status().cost).toEqual({ usd: 0 });
  });
});
