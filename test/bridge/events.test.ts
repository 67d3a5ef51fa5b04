import { describe, expect, it } from 'vitest';
import { AnswerText } from '../../src/client/stream.js';
import type { ChatMessage } from '../../src/shared/types.js';
import {
  askUpdate,
  endSignal,
  pollEventsUpdate,
  type ConversationOutcome,
  type ConversationSettings,
} from '../../src/workflows/definitions.js';
import type { PollEventsResult, StreamEvent } from '../../src/workflows/stream-events.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { collectTurn, until } from './helpers.js';

const bed = useTimeSkippingWithCrm();

const textOf = (events: StreamEvent[], round: number) =>
  events
    .filter((event) => event.type === 'text_delta' && event.round === round)
    .map((event) => (event.type === 'text_delta' ? event.text : ''))
    .join('');

describe('streaming: events of a turn', () => {
  it('stream: turn, attempt, text, tool and finish events arrive in order with consecutive offsets', async () => {
    const agent = await bed.agentWith([
      {
        content: 'Let me look that up. ',
        toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }],
        chunkDelayMs: 20,
      },
      { content: 'Ada Lovelace is user u-1 and works for company c-9.', chunkDelayMs: 20 },
    ]);
    const handle = await agent.startConversation('events-order');
    const subscription = collectTurn(bed.env.client, 'events-order');
    const result = await handle.executeUpdate(askUpdate, { args: [{ id: 'q-1', content: 'Who is Ada?' }] });
    const events = await subscription;

    expect(result).toMatchObject({ stopReason: 'completed', rounds: 2, toolCalls: 1 });
    expect(events.map((event) => event.offset)).toEqual(events.map((_, index) => index));

    // Text deltas are batched: collapse each run of them to one entry to compare the shape.
    const shape = events
      .map((event) => (event.type === 'text_delta' ? `text r${event.round}` : event.type))
      .filter((entry, index, all) => !(entry.startsWith('text') && all[index - 1] === entry));
    expect(shape).toEqual([
      'turn_started',
      'model_attempt_started',
      'text r1',
      'tool_call_started',
      'tool_call_finished',
      'model_attempt_started',
      'text r2',
      'turn_finished',
    ]);
    expect(events[0]).toMatchObject({ type: 'turn_started', turn: 1, messageId: 'q-1' });
    expect(events[1]).toMatchObject({ type: 'model_attempt_started', turn: 1, round: 1, attempt: 1 });
    expect(textOf(events, 1)).toBe('Let me look that up. ');
    expect(textOf(events, 2)).toBe('Ada Lovelace is user u-1 and works for company c-9.');

    const started = events.find((event) => event.type === 'tool_call_started');
    const finished = events.find((event) => event.type === 'tool_call_finished');
    expect(started).toMatchObject({ name: 'crm__find_user', arguments: '{"name":"Ada"}' });
    expect(finished).toMatchObject({ name: 'crm__find_user', outcome: 'ok', toolCallId: started?.toolCallId });
    expect(finished?.type === 'tool_call_finished' && finished.preview).toContain('u-1');
    expect(events.at(-1)).toMatchObject({
      type: 'turn_finished',
      turn: 1,
      messageId: 'q-1',
      stopReason: 'completed',
      answer: result.answer,
      usage: result.usage,
    });
    await handle.signal(endSignal);
  });

  it('stream: a failure in the middle of a stream is retried as a new attempt, and the consumer shows no duplicate text', async () => {
    const answer = 'one two three four five six';
    const agent = await bed.agentWith([
      { content: answer, chunkDelayMs: 100, failAfterChunks: 4 },
      { content: answer, chunkDelayMs: 20 },
    ]);
    const handle = await agent.startConversation('events-retry');
    const subscription = collectTurn(bed.env.client, 'events-retry');
    const result = await handle.executeUpdate(askUpdate, { args: [{ id: 'q-1', content: 'Count.' }] });
    const events = await subscription;

    expect(result.answer).toBe(answer);
    const attempts = events.filter((event) => event.type === 'model_attempt_started');
    expect(attempts.map((event) => event.type === 'model_attempt_started' && event.attempt)).toEqual([1, 2]);
    const partial = events.filter((event) => event.type === 'text_delta' && event.attempt === 1);
    expect(partial.length).toBeGreaterThan(0);
    // Appending every delta would show the start twice; applying the attempts shows the answer once.
    expect(textOf(events, 1)).not.toBe(answer);
    const text = new AnswerText();
    const changes = events.map((event) => text.apply(event)).filter((change) => change !== undefined);
    expect(text.turn(1)).toBe(answer);
    expect(changes.some((change) => change.change === 'replace')).toBe(true);
    // The retry's attempt is announced before any of its text.
    const secondAttempt = events.indexOf(attempts[1]!);
    expect(events.slice(0, secondAttempt).every((event) => event.type !== 'text_delta' || event.attempt === 1)).toBe(
      true,
    );
    await handle.signal(endSignal);
  });

  it('stream: a late subscriber gets the current turn from its start, and after the turn the last turn', async () => {
    const agent = await bed.agentWith([
      { content: 'alpha beta gamma delta epsilon zeta eta theta', chunkDelayMs: 150 },
    ]);
    const handle = await agent.startConversation('events-late');
    let seenText = false;
    const early = collectTurn(bed.env.client, 'events-late', {
      onEvent: (event) => (seenText ||= event.type === 'text_delta'),
    });
    const asked = handle.executeUpdate(askUpdate, { args: [{ id: 'q-1', content: 'Greek letters?' }] });
    await until(() => seenText, 'the first text delta');
    const late = await collectTurn(bed.env.client, 'events-late');
    const earlyEvents = await early;
    await asked;

    expect(late[0]).toMatchObject({ type: 'turn_started', offset: 0 });
    expect(late).toEqual(earlyEvents);
    // After the turn, a subscriber without an offset still gets that whole turn.
    expect(await collectTurn(bed.env.client, 'events-late')).toEqual(earlyEvents);
    // A subscriber from an offset gets the events from there.
    expect(await collectTurn(bed.env.client, 'events-late', { from: 3 })).toEqual(earlyEvents.slice(3));
    await handle.signal(endSignal);
  });

  it('stream: old turns are truncated, offsets keep growing, and the next turn starts after the last offset', async () => {
    const agent = await bed.agentWith([{ content: 'first' }, { content: 'second' }, { content: 'third' }]);
    const handle = await agent.startConversation('events-truncate');
    for (const [index, question] of ['a', 'b', 'c'].entries()) {
      await handle.executeUpdate(askUpdate, { args: [{ id: `q-${index}`, content: question }] });
    }
    const third = await collectTurn(bed.env.client, 'events-truncate');
    expect(third[0]).toMatchObject({ type: 'turn_started', turn: 3 });
    // Turn 2 is still kept (the previous turn); turn 1 is gone, so offset 0 gives the latest turn.
    const fromSecond = await collectTurn(bed.env.client, 'events-truncate', { from: third[0]!.offset - 1 });
    expect(fromSecond[0]).toMatchObject({ type: 'turn_finished', turn: 2 });
    expect(await collectTurn(bed.env.client, 'events-truncate', { from: 0 })).toEqual(third);
    await handle.signal(endSignal);
  });
});

describe('streaming across runs', () => {
  it('stream: a subscriber follows continue-as-new, and offsets keep growing in the new run', async () => {
    const agent = await bed.agentWith([{ content: 'first answer' }, { content: 'second answer' }]);
    const handle = await agent.startConversation('events-can', { settings: { maxTurnsPerRun: 1 } });
    const subscription = collectTurn(bed.env.client, 'events-can', { turns: 2 });
    await handle.executeUpdate(askUpdate, { args: [{ id: 'q-1', content: 'one' }] });
    // The run continues as new after its turn; the next message goes to the new run.
    const latest = bed.env.client.workflow.getHandle(handle.workflowId);
    let runId = handle.firstExecutionRunId;
    await until(
      () => runId !== handle.firstExecutionRunId,
      'the new run',
      30_000,
      async () => {
        runId = (await latest.describe()).runId;
      },
    );
    await latest.executeUpdate(askUpdate, { args: [{ id: 'q-2', content: 'two' }] });
    const events = await subscription;

    expect(events.map((event) => event.offset)).toEqual(events.map((_, index) => index));
    const finished = events.filter((event) => event.type === 'turn_finished');
    expect(finished.map((event) => event.type === 'turn_finished' && event.answer)).toEqual([
      'first answer',
      'second answer',
    ]);
    await latest.signal(endSignal);
  });
  it('stream: the poll that gets the last turn of a run that rolls over says closing, so nobody polls that run again', async () => {
    const agent = await bed.agentWith([{ content: 'the only answer of this run', delayMs: 300 }]);
    const handle = await agent.startConversation('events-closing', { settings: { maxTurnsPerRun: 1, stream: false } });
    const asked = handle.executeUpdate(askUpdate, { args: [{ id: 'q-1', content: 'one' }] });
    // Polls pinned to the first run, as a subscriber polls, until the turn's end comes.
    const results: PollEventsResult[] = [];
    let from = 0;
    while (!results.some((result) => result.events.some((event) => event.type === 'turn_finished'))) {
      const result = await handle.executeUpdate(pollEventsUpdate, { args: [{ from }] });
      results.push(result);
      from = result.next;
    }
    await asked;
    const last = results.at(-1)!;
    expect(last.events.map((event) => event.type)).toContain('turn_finished');
    expect(last.closing).toBe(true);
    // Earlier answers (the turn still running) did not say so.
    expect(results.slice(0, -1).map((result) => result.closing)).toEqual(results.slice(0, -1).map(() => false));
    const latest = bed.env.client.workflow.getHandle(handle.workflowId);
    await latest.signal(endSignal);
  });
});

describe('streaming on and off', () => {
  /** Run the same script under the same conversation id (so the scripted model's ids match) and return the transcript. */
  async function transcriptWith(settings: ConversationSettings) {
    const agent = await bed.agentWith([
      {
        content: 'Let me look.',
        toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }],
        usage: { prompt_tokens: 40, completion_tokens: 12 },
      },
      // Explicit usage: the scripted model estimates prompt tokens from the body, which `stream` makes longer.
      { content: 'Ada is user u-1.', chunkDelayMs: 5, usage: { prompt_tokens: 60, completion_tokens: 6 } },
    ]);
    const handle = await agent.startConversation('on-off', {
      settings,
      messages: [{ id: 'q-1', content: 'Who is Ada?' }],
      closeWhenIdle: true,
    });
    const outcome = (await handle.result()) as ConversationOutcome;
    return { transcript: outcome.state.transcript, result: outcome.state.lastResult, requests: agent.model.requests };
  }

  it('stream: streaming off gives an identical transcript and result to streaming on', async () => {
    const off = await transcriptWith({ stream: false });
    const on = await transcriptWith({});
    expect(off.requests.map((request) => request.options.stream)).toEqual([undefined, undefined]);
    expect(on.requests.map((request) => request.options.stream)).toEqual([true, true]);
    expect(on.requests[0]?.options.stream_options).toEqual({ include_usage: true });

    expect(on.transcript).toEqual(off.transcript);
    const { durationMs: _on, ...onResult } = on.result!;
    const { durationMs: _off, ...offResult } = off.result!;
    expect(onResult).toEqual(offResult);
    expect(on.transcript.map((message: ChatMessage) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
  });
});
