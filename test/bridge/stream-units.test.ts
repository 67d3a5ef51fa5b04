import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import { assembleCompletion, fromOpenAICompletion } from '../../src/worker/activities/model/call.js';
import { TextPublisher, type StreamTarget } from '../../src/worker/activities/model/text-publisher.js';
import { EventLog, type StreamBatch } from '../../src/workflows/stream-events.js';

describe('EventLog', () => {
  it('event log: text of an older attempt or of a finished model call is dropped; a new attempt is announced once', () => {
    const log = new EventLog(10);
    log.startTurn(1, 'm-1');
    log.startModelCall(1, 1);
    expect(log.acceptBatch({ turn: 1, round: 1, attempt: 1, text: 'Hel' })).toBe(true);
    expect(log.acceptBatch({ turn: 1, round: 1, attempt: 2, text: '' })).toBe(true);
    expect(log.acceptBatch({ turn: 1, round: 1, attempt: 1, text: 'lo' })).toBe(false);
    expect(log.acceptBatch({ turn: 1, round: 1, attempt: 2, text: 'Hello' })).toBe(true);
    log.finishModelCall();
    expect(log.acceptBatch({ turn: 1, round: 1, attempt: 2, text: ' late' })).toBe(false);
    expect(log.read(0).events.map((event) => [event.offset, event.type])).toEqual([
      [10, 'turn_started'],
      [11, 'model_attempt_started'],
      [12, 'text_delta'],
      [13, 'model_attempt_started'],
      [14, 'text_delta'],
    ]);
    expect(log.nextOffset).toBe(15);
  });

  it('event log: the answer in the result completes the streamed text; an answer that does not continue it is a new attempt', () => {
    const log = new EventLog();
    log.startTurn(1, 'm-1');
    log.startModelCall(1, 1);
    log.acceptBatch({ turn: 1, round: 1, attempt: 1, text: 'Hello' });
    log.finishModelCall('Hello, world.');
    log.startModelCall(1, 2);
    log.finishModelCall('Not streamed at all.');
    log.startModelCall(1, 3);
    log.acceptBatch({ turn: 1, round: 3, attempt: 1, text: 'Partial answer of attempt 1' });
    log.finishModelCall('The retry answered differently.');
    log.startModelCall(1, 4);
    log.acceptBatch({ turn: 1, round: 4, attempt: 1, text: 'All of it.' });
    log.finishModelCall('All of it.');
    log.startModelCall(1, 5);
    log.finishModelCall(null);
    const text = log
      .read(0)
      .events.flatMap((event) =>
        event.type === 'text_delta' ? [`${event.round}/${event.attempt}: ${event.text}`] : [],
      );
    expect(text).toEqual([
      '1/1: Hello',
      '1/1: , world.',
      '2/1: Not streamed at all.',
      '3/1: Partial answer of attempt 1',
      '3/2: The retry answered differently.',
      '4/1: All of it.',
    ]);
    const attempts = log.read(0).events.filter((event) => event.type === 'model_attempt_started');
    expect(attempts.map((event) => `${event.round}/${event.attempt}`)).toEqual([
      '1/1',
      '2/1',
      '3/1',
      '3/2',
      '4/1',
      '5/1',
    ]);
  });

  it('event log: keeps the current and the previous turn; a missing or truncated offset resolves to the latest turn', () => {
    const log = new EventLog();
    for (const turn of [1, 2, 3]) {
      log.startTurn(turn, `m-${turn}`);
      log.append({ type: 'tool_call_started', turn, toolCallId: `c-${turn}`, name: 'x', arguments: '{}' });
    }
    expect(log.read(0).events.map((event) => event.turn)).toEqual([2, 2, 3, 3]);
    expect(log.resolve(undefined)).toEqual({ start: 4, truncated: false });
    expect(log.resolve(0)).toEqual({ start: 4, truncated: false });
    expect(log.resolve(1)).toEqual({ start: 4, truncated: true });
    expect(log.resolve(3)).toEqual({ start: 3, truncated: false });
    expect(log.resolve(99)).toEqual({ start: 6, truncated: false });
    expect(log.read(6)).toEqual({ events: [], next: 6 });
  });
});

describe('TextPublisher', () => {
  it('publisher: the first text goes at once, the rest in batches, in order; close delivers what is queued, not the rest', async () => {
    const sent: StreamBatch[] = [];
    const target: StreamTarget = { workflowId: 'w', runId: 'r' };
    const publisher = new TextPublisher({
      target,
      batch: { turn: 1, round: 2, attempt: 1 },
      intervalMs: 60_000,
      publish: async (to, batch) => {
        expect(to).toEqual(target);
        sent.push(batch);
      },
    });
    publisher.add('one ');
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent.map((batch) => batch.text)).toEqual(['one ']);
    publisher.add('two ');
    publisher.add('three');
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toHaveLength(1);
    await publisher.close();
    // "two three" is left to the activity's result (EventLog.finishModelCall): no signal for it.
    expect(sent).toEqual([{ turn: 1, round: 2, attempt: 1, text: 'one ' }]);

    const queued: StreamBatch[] = [];
    let release = () => {};
    const slow = new TextPublisher({
      target,
      batch: { turn: 1, round: 3, attempt: 1 },
      intervalMs: 0,
      publish: async (_to, batch) => {
        queued.push(batch);
        if (queued.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    slow.add('a');
    await new Promise((resolve) => setImmediate(resolve)); // 'a' is being delivered, slowly
    slow.add('b'); // queued behind it
    const closed = slow.close();
    release();
    await closed;
    expect(queued.map((batch) => batch.text)).toEqual(['a', 'b']);
  });

  it('publisher: close gives up on a signal Temporal does not take (an outage): the answer is not held, queued batches are dropped', async () => {
    const sent: string[] = [];
    const warnings: string[] = [];
    let release = () => {};
    const publisher = new TextPublisher({
      target: { workflowId: 'w', runId: 'r' },
      batch: { turn: 1, round: 2, attempt: 1 },
      intervalMs: 0,
      closeWaitMs: 50,
      log: { warn: (message) => warnings.push(message) },
      publish: async (_to, batch) => {
        sent.push(batch.text);
        // The first signal hangs, as one does while the Temporal server is down.
        if (sent.length === 1) await new Promise<void>((resolve) => (release = resolve));
      },
    });
    publisher.add('first');
    await new Promise((resolve) => setImmediate(resolve));
    publisher.add('second'); // queued behind the hanging signal
    const closed = await Promise.race([
      publisher.close().then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2_000)),
    ]);
    expect(closed).toBe('closed');
    expect(warnings).toEqual(['streamed text not delivered in time; the rest of this answer comes with its result']);
    // Temporal is back: the hanging signal goes through (the workflow drops it as late); the queued one is not sent.
    release();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(sent).toEqual(['first']);
  });

  it('publisher: a retry announces its attempt with an empty batch; a failed signal stops publishing without failing', async () => {
    const sent: StreamBatch[] = [];
    const warnings: string[] = [];
    const publisher = new TextPublisher({
      target: { workflowId: 'w', runId: 'r' },
      batch: { turn: 1, round: 1, attempt: 3 },
      log: { warn: (message) => warnings.push(message) },
      publish: async (_to, batch) => {
        sent.push(batch);
        if (batch.text === 'boom') throw new Error('workflow not found');
      },
    });
    publisher.announce();
    await new Promise((resolve) => setImmediate(resolve));
    publisher.add('boom');
    await publisher.close();
    publisher.add('ignored');
    expect(sent.map((batch) => batch.text)).toEqual(['', 'boom']);
    expect(warnings).toHaveLength(1);
  });
});

function chunk(delta: ChatCompletionChunk.Choice['delta'], finish: string | null = null): ChatCompletionChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [
      { index: 0, delta, logprobs: null, finish_reason: finish as ChatCompletionChunk.Choice['finish_reason'] },
    ],
  };
}

async function* chunks(...list: ChatCompletionChunk[]) {
  yield* list;
}

describe('assembleCompletion', () => {
  it('assemble: text and tool calls streamed in pieces give the same message as the completion', async () => {
    const texts: string[] = [];
    const assembled = await assembleCompletion(
      chunks(
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Let me ' }),
        chunk({ content: 'look.' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
        chunk({}, 'tool_calls'),
        { ...chunk({}), choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
      ),
      (text) => texts.push(text),
    );
    expect(texts).toEqual(['Let me ', 'look.']);
    const whole: ChatCompletion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: 'Let me look.',
            refusal: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
          },
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    };
    expect(fromOpenAICompletion(assembled, false)).toEqual(fromOpenAICompletion(whole, false));
  });

  it('assemble: tool calls without content keep content null, as the non-streamed answer does', async () => {
    const assembled = await assembleCompletion(
      chunks(
        chunk({ role: 'assistant', content: null }),
        chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
      ),
      () => undefined,
    );
    expect(fromOpenAICompletion(assembled, false).message).toEqual({
      role: 'assistant',
      content: null,
      toolCalls: [{ id: 'call_1', name: 'f', arguments: '{}' }],
    });
  });

  it('assemble: a stream cut before its finish reason is a retryable ModelInvalidResponse', async () => {
    await expect(
      assembleCompletion(chunks(chunk({ role: 'assistant', content: '' }), chunk({ content: 'par' })), () => undefined),
    ).rejects.toMatchObject({ type: 'ModelInvalidResponse', nonRetryable: false });
  });
});
