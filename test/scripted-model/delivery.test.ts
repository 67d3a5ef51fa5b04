import type OpenAI from 'openai';
import { APIConnectionError } from 'openai';
import { describe, expect, it } from 'vitest';
import { startScriptedModel } from '../../src/testing/scripted-model/index.js';
import { clientFor, keyOf, MODEL, useScriptedModels, userMessage, withKey } from './helpers.js';

const startModel = useScriptedModels();

describe('scripted model: delivery', () => {
  it('failAfterChunks drops the connection mid-stream: the client gets the first chunks, then an error', async () => {
    const model = await startModel({ script: [{ content: 'one two three four five six', failAfterChunks: 3 }] });
    const stream = await clientFor(model).chat.completions.create({
      model: MODEL,
      messages: userMessage('Count'),
      stream: true,
    });

    const received: OpenAI.Chat.ChatCompletionChunk[] = [];
    const consume = async () => {
      for await (const chunk of stream) received.push(chunk);
    };

    await expect(consume()).rejects.toThrow();
    expect(received.map((chunk) => chunk.choices[0]?.delta.content)).toEqual(['', 'one ', 'two ']);
  });

  it('failAfterChunks past the last chunk drops the connection before data: [DONE]', async () => {
    const model = await startModel({ script: [{ content: 'hi', failAfterChunks: 100 }] });
    const stream = clientFor(model).chat.completions.stream({ model: MODEL, messages: userMessage('Hi') });

    await expect(stream.finalChatCompletion()).rejects.toThrow();
  });

  it('failAfterChunks on a non-streaming request drops the connection before any response', async () => {
    const model = await startModel({ script: [{ content: 'hi', failAfterChunks: 0 }] });

    await expect(
      clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Hi') }),
    ).rejects.toBeInstanceOf(APIConnectionError);
  });

  it('a retry of a dropped stream gets the next step, as a retry after an error does', async () => {
    const model = await startModel({ script: [{ content: 'a b c', failAfterChunks: 1 }, { content: 'complete' }] });
    const client = clientFor(model);
    const key = keyOf('wf-drop', 1, 1);
    const ask = async () => {
      const stream = client.chat.completions.stream({ model: MODEL, messages: userMessage('Hi') }, withKey(key));
      return (await stream.finalChatCompletion()).choices[0]?.message.content;
    };

    await expect(ask()).rejects.toThrow();
    expect(await ask()).toBe('complete');
    expect(model.requestsFor('wf-drop').map((request) => request.stepIndex)).toEqual([0, 1]);
  });

  it('delayMs and chunkDelayMs slow the answer down without changing it', async () => {
    const model = await startModel({ script: [{ content: 'slow but sure', delayMs: 20, chunkDelayMs: 5 }] });

    const response = await clientFor(model)
      .chat.completions.stream({ model: MODEL, messages: userMessage('Hi') })
      .finalChatCompletion();

    expect(response.choices[0]?.message.content).toBe('slow but sure');
  });

  it('many requests waiting at once (a benchmark at fifty conversations) raise no listener-leak warning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const model = await startModel({ script: () => ({ content: 'later', delayMs: 100 }) });
      const client = clientFor(model);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          client.chat.completions.create(
            { model: MODEL, messages: userMessage('Hi') },
            withKey(keyOf(`wf-waiting-${index}`, 1, 1)),
          ),
        ),
      );
      expect(answers.map((answer) => answer.choices[0]?.message.content)).toEqual(Array(20).fill('later'));
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('an error step waits for its delayMs too', async () => {
    const model = await startModel({ script: [{ error: { status: 500 }, delayMs: 10 }] });

    await expect(
      clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Hi') }),
    ).rejects.toMatchObject({ status: 500 });
  });

  it('close() ends requests still waiting, so a test never hangs on a slow step', async () => {
    const model = await startScriptedModel({ script: [{ content: 'never', delayMs: 60_000 }] });
    const pending = clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Hi') });
    const settled = pending.then(
      () => 'answered',
      (error: unknown) => error,
    );
    while (model.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));

    await model.close();

    expect(await settled).toBeInstanceOf(APIConnectionError);
  });

  it('close() ends a stream under way, and can be called again', async () => {
    const model = await startScriptedModel({ script: [{ content: 'a b c d e f g', chunkDelayMs: 60_000 }] });
    const stream = await clientFor(model).chat.completions.create({
      model: MODEL,
      messages: userMessage('Hi'),
      stream: true,
    });
    const consumed = (async () => {
      for await (const _chunk of stream) {
        // Only the end matters here.
      }
    })();

    await Promise.all([model.close(), model.close()]);

    await expect(consumed).rejects.toThrow();
  });

  it('Symbol.asyncDispose closes the server', async () => {
    const model = await startScriptedModel({ script: [] });

    await model[Symbol.asyncDispose]();

    await expect(fetch(`${model.baseUrl}/models`)).rejects.toThrow();
  });
});
