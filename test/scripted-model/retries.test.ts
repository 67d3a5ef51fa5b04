import type OpenAI from 'openai';
import { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONVERSATION, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { clientFor, keyOf, MODEL, useScriptedModels, userMessage, withKey } from './helpers.js';

/**
 * Retries of a model call whose answer never arrived: the worker died while the step waited (`delayMs`) or streamed.
 * The client gives up here the way a killed worker does, by dropping the connection (an abort), over real HTTP.
 */

const startModel = useScriptedModels();

/** Resolves once the scripted model has received `count` requests, so that an abort lands while a step waits. */
async function requestsReceived(model: ScriptedModel, count: number): Promise<void> {
  for (let attempt = 0; attempt < 2_000 && model.requests.length < count; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(model.requests.length).toBeGreaterThanOrEqual(count);
}

/** Sends a request and drops it once the scripted model has it, as a worker killed during `delayMs` does. */
async function abandon(model: ScriptedModel, key: string | null): Promise<void> {
  const client = clientFor(model);
  const aborting = new AbortController();
  const received = model.requests.length;
  const request = client.chat.completions.create(
    { model: MODEL, messages: userMessage('Hi') },
    { ...(key === null ? {} : withKey(key)), signal: aborting.signal },
  );
  await requestsReceived(model, received + 1);
  aborting.abort();
  await expect(request).rejects.toBeInstanceOf(APIUserAbortError);
}

async function contentOf(model: ScriptedModel, key: string | null, options: OpenAI.RequestOptions = {}) {
  const response = await clientFor(model).chat.completions.create(
    { model: MODEL, messages: userMessage('Hi') },
    { ...(key === null ? {} : withKey(key)), ...options },
  );
  return response.choices[0]?.message.content;
}

function statusOf(promise: Promise<unknown>): Promise<number | undefined> {
  return promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(APIError);
      return (error as APIError).status;
    },
  );
}

describe('scripted model: a retry with the same idempotency key gets the same content or tool-call step', () => {
  it('a request dropped during delayMs (a killed worker): its retry gets the same step, a new key the next one', async () => {
    const model = await startModel({ script: [{ content: 'A', delayMs: 1_000 }, { content: 'B' }] });
    const key = keyOf('wf-crash', 1, 1);

    await abandon(model, key);
    const retry = await contentOf(model, key);
    const nextRound = await contentOf(model, keyOf('wf-crash', 1, 2));

    expect([retry, nextRound]).toEqual(['A', 'B']);
    // The record shows the dropped attempt and its retry: same key, same step, the retry marked as replayed.
    expect(
      model.requestsFor('wf-crash').map(({ idempotencyKey, stepIndex, replayed }) => ({
        idempotencyKey,
        stepIndex,
        replayed,
      })),
    ).toEqual([
      { idempotencyKey: key, stepIndex: 0, replayed: false },
      { idempotencyKey: key, stepIndex: 0, replayed: true },
      { idempotencyKey: keyOf('wf-crash', 1, 2), stepIndex: 1, replayed: false },
    ]);
  });

  it('a retry that arrives while the first attempt still waits gets the same step too', async () => {
    const model = await startModel({ script: [{ content: 'A', delayMs: 300 }, { content: 'B' }] });
    const key = keyOf('wf-overlap', 1, 1);

    const answers = await Promise.all([contentOf(model, key), contentOf(model, key)]);

    expect(answers).toEqual(['A', 'A']);
    expect(await contentOf(model, keyOf('wf-overlap', 1, 2))).toBe('B');
  });

  it('a stream dropped halfway by the client: the retry gets the whole step again, with the same tool call ids', async () => {
    const model = await startModel({
      script: [
        {
          content: 'Reading both files now.',
          toolCalls: [{ name: 'files__read', arguments: { path: '/a' } }],
          chunkDelayMs: 100,
        },
        { content: 'done' },
      ],
    });
    const client = clientFor(model);
    const key = keyOf('wf-stream', 1, 1);
    const aborting = new AbortController();
    const stream = await client.chat.completions.create(
      { model: MODEL, messages: userMessage('Read'), stream: true },
      { ...withKey(key), signal: aborting.signal },
    );
    const received: OpenAI.Chat.ChatCompletionChunk[] = [];
    // The client's stream ends quietly when aborted: what matters is that the answer was cut off.
    for await (const chunk of stream) {
      received.push(chunk);
      if (received.length === 2) aborting.abort();
    }
    expect(received).toHaveLength(2);

    const retry = await client.chat.completions
      .stream({ model: MODEL, messages: userMessage('Read') }, withKey(key))
      .finalChatCompletion();

    expect(received.map((chunk) => chunk.id)).toEqual([retry.id, retry.id]);
    const message = retry.choices[0]?.message;
    expect(message?.content).toBe('Reading both files now.');
    const call = message?.tool_calls?.[0];
    expect(call?.type === 'function' && call.function).toEqual({ name: 'files__read', arguments: '{"path":"/a"}' });
    expect(model.requestsFor('wf-stream').map((request) => [request.stepIndex, request.replayed])).toEqual([
      [0, false],
      [0, true],
    ]);
  });

  it('a step function is called once: the retry of a dropped request gets what it returned', async () => {
    let calls = 0;
    const model = await startModel({
      script: [
        () => {
          calls += 1;
          return { content: `answer ${calls}`, delayMs: 1_000 };
        },
        { content: 'next round' },
      ],
    });
    const key = keyOf('wf-function', 1, 1);

    await abandon(model, key);

    expect(await contentOf(model, key)).toBe('answer 1');
    expect(calls).toBe(1);
  });

  it('by default every attempt waits delayMs, so the retry can be held back (and its worker killed) again', async () => {
    const model = await startModel({ script: [{ content: 'slow', delayMs: 60_000 }] });
    const key = keyOf('wf-slow', 1, 1);

    await abandon(model, key);
    const retry = contentOf(model, key, { timeout: 200 });

    await expect(retry).rejects.toBeInstanceOf(APIConnectionTimeoutError);
    expect(model.requests.map((request) => [request.stepIndex, request.replayed])).toEqual([
      [0, false],
      [0, true],
    ]);
  });

  it('delayAttempts: 1 holds back only the first attempt: a client that timed out gets the answer on its retry', async () => {
    const model = await startModel({
      script: [{ content: 'too late the first time', delayMs: 60_000, delayAttempts: 1 }, { content: 'next round' }],
    });
    const key = keyOf('wf-timeout', 1, 1);

    await expect(contentOf(model, key, { timeout: 50 })).rejects.toBeInstanceOf(APIConnectionTimeoutError);
    const retry = await contentOf(model, key);

    expect(retry).toBe('too late the first time');
    expect(await contentOf(model, keyOf('wf-timeout', 1, 2))).toBe('next round');
  });

  it('requests without a key are never retries: a dropped one is followed by the next step, as before', async () => {
    const model = await startModel({ script: [{ content: 'A', delayMs: 1_000 }, { content: 'B' }] });

    await abandon(model, null);

    expect(await contentOf(model, null)).toBe('B');
    expect(model.requestsFor(DEFAULT_CONVERSATION).map((request) => request.replayed)).toEqual([false, false]);
  });
});

describe('scripted model: errors and dropped streams stay one step per attempt', () => {
  it('[error 500, content A] with the same key: the first attempt fails, the retry gets A and keeps it', async () => {
    const model = await startModel({ script: [{ error: { status: 500 } }, { content: 'A' }, { content: 'B' }] });
    const key = keyOf('wf-fail-once', 1, 1);

    expect(await statusOf(contentOf(model, key))).toBe(500);
    expect(await contentOf(model, key)).toBe('A');
    expect(await contentOf(model, key)).toBe('A');
    expect(await contentOf(model, keyOf('wf-fail-once', 1, 2))).toBe('B');
    expect(
      model.requestsFor('wf-fail-once').map(({ stepIndex, status, replayed }) => [stepIndex, status, replayed]),
    ).toEqual([
      [0, 500, false],
      [1, 200, false],
      [1, 200, true],
      [2, 200, false],
    ]);
  });

  it('an error step waiting in delayMs when the client drops: the retry gets the next step', async () => {
    const model = await startModel({ script: [{ error: { status: 503 }, delayMs: 1_000 }, { content: 'A' }] });
    const key = keyOf('wf-error-dropped', 1, 1);

    await abandon(model, key);

    expect(await contentOf(model, key)).toBe('A');
  });

  it('a dropped stream (failAfterChunks) with a delay: each attempt takes the next step', async () => {
    const model = await startModel({
      script: [
        { content: 'a b c', failAfterChunks: 1, delayMs: 10 },
        { content: 'a b c', failAfterChunks: 2 },
        { content: 'complete' },
      ],
    });
    const client = clientFor(model);
    const key = keyOf('wf-drops', 1, 1);
    const ask = async () =>
      (
        await client.chat.completions
          .stream({ model: MODEL, messages: userMessage('Hi') }, withKey(key))
          .finalChatCompletion()
      ).choices[0]?.message.content;

    await expect(ask()).rejects.toThrow();
    await expect(ask()).rejects.toThrow();
    expect(await ask()).toBe('complete');
    expect(await ask()).toBe('complete');
    expect(model.requestsFor('wf-drops').map((request) => [request.stepIndex, request.replayed])).toEqual([
      [0, false],
      [1, false],
      [2, false],
      [2, true],
    ]);
  });
});
