import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { conversationOf, DEFAULT_CONVERSATION } from '../../src/testing/scripted-model/cursor.js';
import { clientFor, keyOf, MODEL, useScriptedModels, userMessage, withKey } from './helpers.js';

const startModel = useScriptedModels();

function errorOf(promise: Promise<unknown>): Promise<APIError> {
  return promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(APIError);
      return error as APIError;
    },
  );
}

describe('conversationOf: the conversation is the workflow id of the idempotency key', () => {
  it('takes everything before /<runId>/turn-<n>/round-<r>', () => {
    expect(conversationOf('chat-42/0190a-run/turn-3/round-2')).toBe('chat-42');
  });

  it('keeps slashes that belong to the workflow id', () => {
    expect(conversationOf('team/alice/chat-1/run-9/turn-1/round-1')).toBe('team/alice/chat-1');
  });

  it('ignores a suffix after the round', () => {
    expect(conversationOf('chat-1/run-9/turn-2/round-5/final')).toBe('chat-1');
  });

  it('puts a missing key, or one of another shape, in the default conversation', () => {
    expect(conversationOf(null)).toBe(DEFAULT_CONVERSATION);
    expect(conversationOf('stainless-node-retry-1234')).toBe(DEFAULT_CONVERSATION);
    expect(conversationOf('chat-1/turn-2/round-5')).toBe(DEFAULT_CONVERSATION);
  });
});

describe('scripted model: cursors', () => {
  it('each conversation goes through the script from its first step', async () => {
    const model = await startModel({ script: [{ content: 'first' }, { content: 'second' }] });
    const client = clientFor(model);
    const ask = async (workflowId: string, round: number) =>
      (
        await client.chat.completions.create(
          { model: MODEL, messages: userMessage('Hi') },
          withKey(keyOf(workflowId, 1, round)),
        )
      ).choices[0]?.message.content;

    expect(await ask('wf-a', 1)).toBe('first');
    expect(await ask('wf-b', 1)).toBe('first');
    expect(await ask('wf-a', 2)).toBe('second');
    expect(await ask('wf-b', 2)).toBe('second');
  });

  it('20 conversations in parallel each get their own steps in order', async () => {
    const model = await startModel({
      script: [
        { toolCalls: [{ name: 'files__list' }], delayMs: 5 },
        { toolCalls: [{ name: 'files__read_file', arguments: { path: '/a' } }], chunkDelayMs: 1 },
        { content: 'done' },
      ],
    });
    const client = clientFor(model);
    const workflowIds = Array.from({ length: 20 }, (_, index) => `bench/wf-${index}`);

    const transcripts = await Promise.all(
      workflowIds.map(async (workflowId) => {
        const answers: string[] = [];
        for (let round = 1; round <= 3; round += 1) {
          const response = await client.chat.completions
            .stream({ model: MODEL, messages: userMessage('Go') }, withKey(keyOf(workflowId, 1, round)))
            .finalChatCompletion();
          const message = response.choices[0]?.message;
          const call = message?.tool_calls?.[0];
          answers.push(call?.type === 'function' ? call.function.name : (message?.content ?? ''));
        }
        return answers;
      }),
    );

    for (const answers of transcripts) expect(answers).toEqual(['files__list', 'files__read_file', 'done']);
    for (const workflowId of workflowIds) {
      expect(model.requestsFor(workflowId).map((request) => request.stepIndex)).toEqual([0, 1, 2]);
    }
  });

  it('the cursor belongs to the workflow id, so it continues across runs (continue-as-new)', async () => {
    const model = await startModel({ script: [{ content: 'before' }, { content: 'after' }] });
    const client = clientFor(model);

    await client.chat.completions.create(
      { model: MODEL, messages: userMessage('Hi') },
      withKey(keyOf('wf-continued', 1, 1, 'run-1')),
    );
    const response = await client.chat.completions.create(
      { model: MODEL, messages: userMessage('Hi') },
      withKey(keyOf('wf-continued', 1, 1, 'run-2')),
    );

    expect(response.choices[0]?.message.content).toBe('after');
  });

  it('a repeated idempotency key (a retry) gets the same step again, not the next one', async () => {
    const model = await startModel({ script: [{ toolCalls: [{ name: 'files__list' }] }, { content: 'done' }] });
    const client = clientFor(model);
    const request = { model: MODEL, messages: userMessage('Go') };

    const first = await client.chat.completions.create(request, withKey(keyOf('wf-retry', 1, 1)));
    const retry = await client.chat.completions.create(request, withKey(keyOf('wf-retry', 1, 1)));
    const next = await client.chat.completions.create(request, withKey(keyOf('wf-retry', 1, 2)));

    expect(retry).toEqual(first);
    expect(next.choices[0]?.message.content).toBe('done');
    expect(model.requestsFor('wf-retry').map((request) => [request.stepIndex, request.replayed])).toEqual([
      [0, false],
      [0, true],
      [1, false],
    ]);
  });

  it('requests without a key share the default conversation and each gets the next step', async () => {
    const model = await startModel({ script: [{ content: 'one' }, { content: 'two' }] });
    const client = clientFor(model);

    const answers = [
      await client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') }),
      await client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') }),
    ];

    expect(answers.map((answer) => answer.choices[0]?.message.content)).toEqual(['one', 'two']);
    expect(model.requestsFor(DEFAULT_CONVERSATION)).toHaveLength(2);
  });

  it('a step function is called with the request, once per conversation, and a retry gets its same answer', async () => {
    const calls: string[] = [];
    const model = await startModel({
      script: [
        (request) => {
          calls.push(request.conversation);
          const last = request.messages.at(-1);
          return { content: `You said: ${typeof last?.content === 'string' ? last.content : ''}` };
        },
      ],
    });
    const client = clientFor(model);

    const first = await client.chat.completions.create(
      { model: MODEL, messages: userMessage('hello') },
      withKey(keyOf('wf-function', 1, 1)),
    );
    const retry = await client.chat.completions.create(
      { model: MODEL, messages: userMessage('something else') },
      withKey(keyOf('wf-function', 1, 1)),
    );

    expect(first.choices[0]?.message.content).toBe('You said: hello');
    expect(retry.choices[0]?.message.content).toBe('You said: hello');
    expect(calls).toEqual(['wf-function']);
  });

  it('a whole script may be a function of the request and the step index; undefined ends it', async () => {
    const model = await startModel({
      name: 'echo-twice',
      script: (_request, { stepIndex }) => (stepIndex < 2 ? { content: `step ${stepIndex}` } : undefined),
    });
    const client = clientFor(model);
    const ask = () => client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') });

    expect((await ask()).choices[0]?.message.content).toBe('step 0');
    expect((await ask()).choices[0]?.message.content).toBe('step 1');
    const error = await errorOf(ask());
    expect(error.status).toBe(500);
    expect(error.message).toContain('echo-twice');
  });
});

describe('scripted model: error steps', () => {
  it('an error step answers its status, headers and an OpenAI-style body the client turns into its error class', async () => {
    const model = await startModel({
      script: [{ error: { status: 429, headers: { 'retry-after': '2' } } }, { content: 'recovered' }],
    });

    const error = await errorOf(
      clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Hi') }),
    );

    expect(error.status).toBe(429);
    expect(error.headers?.get('retry-after')).toBe('2');
    expect(error.code).toBe('rate_limit_exceeded');
    expect(error.constructor.name).toBe('RateLimitError');
  });

  it('an error step sends its body when it has one, JSON or plain text', async () => {
    const model = await startModel({
      script: [
        { error: { status: 400, body: { error: { message: 'context too long', code: 'context_length_exceeded' } } } },
        { error: { status: 502, body: '<html>Bad gateway</html>' } },
      ],
    });
    const client = clientFor(model);

    const jsonError = await errorOf(client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') }));
    const textResponse = await fetch(`${model.baseUrl}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: MODEL, messages: [] }),
    });

    expect(jsonError.code).toBe('context_length_exceeded');
    expect(jsonError.message).toContain('context too long');
    expect(textResponse.status).toBe(502);
    expect(await textResponse.text()).toBe('<html>Bad gateway</html>');
  });

  it('an error with times: 2 fails two requests in a row, then the script moves on', async () => {
    const model = await startModel({ script: [{ error: { status: 500, times: 2 } }, { content: 'finally' }] });
    const client = clientFor(model);
    const ask = () => client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') });

    expect((await errorOf(ask())).status).toBe(500);
    expect((await errorOf(ask())).status).toBe(500);
    expect((await ask()).choices[0]?.message.content).toBe('finally');
  });

  it('retries with the same key consume the error times, then get the next step and keep it', async () => {
    const model = await startModel({
      script: [{ error: { status: 503, times: 2 } }, { content: 'answer' }, { content: 'next round' }],
    });
    const client = clientFor(model);
    const key = keyOf('wf-errors', 1, 1);
    const ask = (requestKey: string) =>
      client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') }, withKey(requestKey));

    expect((await errorOf(ask(key))).status).toBe(503);
    expect((await errorOf(ask(key))).status).toBe(503);
    expect((await ask(key)).choices[0]?.message.content).toBe('answer');
    expect((await ask(key)).choices[0]?.message.content).toBe('answer');
    expect((await ask(keyOf('wf-errors', 1, 2))).choices[0]?.message.content).toBe('next round');
    expect(model.requestsFor('wf-errors').map((request) => [request.stepIndex, request.status])).toEqual([
      [0, 503],
      [0, 503],
      [1, 200],
      [1, 200],
      [2, 200],
    ]);
  });

  it("the client's own retries go through an error step like any other requests", async () => {
    const model = await startModel({
      script: [{ error: { status: 429, times: 2, headers: { 'retry-after-ms': '1' } } }, { content: 'ok' }],
    });
    const client = clientFor(model).withOptions({ maxRetries: 2 });

    const response = await client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') });

    expect(response.choices[0]?.message.content).toBe('ok');
    expect(model.requests.map((request) => request.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
  });

  it('running past the end answers 500 naming the script, the conversation and its number of steps', async () => {
    const model = await startModel({ name: 'greeting.json', script: [{ content: 'Hi' }] });
    const client = clientFor(model);
    const ask = () =>
      client.chat.completions.create(
        { model: MODEL, messages: userMessage('Hi') },
        withKey(keyOf('wf-past-end', 1, 1 + model.requests.length)),
      );
    await ask();

    const error = await errorOf(ask());

    expect(error.status).toBe(500);
    expect(error.code).toBe('script_exhausted');
    expect(error.message).toContain('greeting.json');
    expect(error.message).toContain('"wf-past-end"');
    expect(error.message).toContain('has 1 step');
    expect(model.requests.at(-1)).toMatchObject({
      stepIndex: null,
      status: 500,
      failure: expect.stringContaining('greeting.json'),
    });
  });

  it('the past-end error says x-should-retry: false, so clients that retry 500s fail at once', async () => {
    const model = await startModel({ script: [] });
    const client = clientFor(model).withOptions({ maxRetries: 2 });

    const error = await errorOf(client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') }));

    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(model.requests).toHaveLength(1);
  });

  it('a step function that throws answers 500 with its message', async () => {
    const model = await startModel({
      script: [
        () => {
          throw new Error('no fixture for this prompt');
        },
      ],
    });

    const error = await errorOf(
      clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Hi') }),
    );

    expect(error.status).toBe(500);
    expect(error.code).toBe('step_failed');
    expect(error.message).toContain('no fixture for this prompt');
  });
});
