import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { clientFor, keyOf, MODEL, useScriptedModels, userMessage, withKey } from './helpers.js';

const startModel = useScriptedModels();

async function collect(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>) {
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe('scripted model: non-streaming completions', () => {
  it('a content step answers with that text, finish_reason stop, and the request model echoed', async () => {
    const model = await startModel({ script: [{ content: 'Hello there.' }] });

    const response = await clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Hi') });

    expect(response.object).toBe('chat.completion');
    expect(response.id).toMatch(/^chatcmpl-/);
    expect(response.model).toBe(MODEL);
    expect(response.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: 'Hello there.', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
  });

  it('a toolCalls step with several entries answers with parallel tool calls and finish_reason tool_calls', async () => {
    const model = await startModel({
      script: [
        {
          toolCalls: [
            { name: 'files__read_file', arguments: { path: '/tmp/a.txt' } },
            { name: 'memory__search', arguments: { query: 'cats' } },
          ],
        },
      ],
    });

    const response = await clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Go') });

    const [choice] = response.choices;
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    const toolCalls = choice?.message.tool_calls ?? [];
    expect(toolCalls.map((call) => call.type === 'function' && call.function)).toEqual([
      { name: 'files__read_file', arguments: '{"path":"/tmp/a.txt"}' },
      { name: 'memory__search', arguments: '{"query":"cats"}' },
    ]);
    expect(toolCalls.map((call) => call.id)).toEqual([
      expect.stringMatching(/^call_/),
      expect.stringMatching(/^call_/),
    ]);
    expect(new Set(toolCalls.map((call) => call.id)).size).toBe(2);
  });

  it('tool call arguments given as a string are sent as they are, even when they are not valid JSON', async () => {
    const model = await startModel({ script: [{ toolCalls: [{ name: 'files__read_file', arguments: '{"path": ' }] }] });

    const response = await clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Go') });

    const [call] = response.choices[0]?.message.tool_calls ?? [];
    expect(call?.type === 'function' && call.function.arguments).toBe('{"path": ');
  });

  it('a step may have content and tool calls together', async () => {
    const model = await startModel({
      script: [{ content: 'Let me look.', toolCalls: [{ name: 'files__list' }] }],
    });

    const response = await clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Go') });

    const message = response.choices[0]?.message;
    expect(message?.content).toBe('Let me look.');
    expect(message?.tool_calls?.map((call) => call.type === 'function' && call.function)).toEqual([
      { name: 'files__list', arguments: '{}' },
    ]);
    expect(response.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('usage comes from the step when it has one', async () => {
    const model = await startModel({
      script: [{ content: 'Hi', usage: { prompt_tokens: 120, completion_tokens: 7 } }],
    });

    const response = await clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Hi') });

    expect(response.usage).toEqual({ prompt_tokens: 120, completion_tokens: 7, total_tokens: 127 });
  });

  it('usage is otherwise estimated at one token per 4 characters of the request body and of the answer', async () => {
    const model = await startModel({ script: [{ content: 'x'.repeat(41) }] });
    const body = { model: MODEL, messages: userMessage('How long is this?') };

    const response = await clientFor(model).chat.completions.create(body);

    const promptTokens = Math.ceil(JSON.stringify(body).length / 4);
    expect(response.usage).toEqual({
      prompt_tokens: promptTokens,
      completion_tokens: 11,
      total_tokens: promptTokens + 11,
    });
  });

  it('finishReason overrides the finish_reason, e.g. to test a truncated answer', async () => {
    const model = await startModel({ script: [{ content: 'Once upon a', finishReason: 'length' }] });

    const response = await clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Tell') });

    expect(response.choices[0]?.finish_reason).toBe('length');
  });

  it('ids are derived from the conversation and the step, so a repeated request gets identical ids', async () => {
    const script = [{ toolCalls: [{ name: 'files__list' }] }];
    const first = await startModel({ script });
    const second = await startModel({ script });
    const request = { model: MODEL, messages: userMessage('Go') };

    const answers = [
      await clientFor(first).chat.completions.create(request, withKey(keyOf('wf-ids', 1, 1))),
      await clientFor(first).chat.completions.create(request, withKey(keyOf('wf-ids', 1, 1))),
      await clientFor(second).chat.completions.create(request, withKey(keyOf('wf-ids', 1, 1))),
      await clientFor(second).chat.completions.create(request, withKey(keyOf('wf-other', 1, 1))),
    ];

    const ids = answers.map((answer) => [answer.id, answer.choices[0]?.message.tool_calls?.[0]?.id]);
    expect(ids[1]).toEqual(ids[0]);
    expect(ids[2]).toEqual(ids[0]);
    expect(ids[3]?.[0]).not.toBe(ids[0]?.[0]);
    expect(ids[3]?.[1]).not.toBe(ids[0]?.[1]);
  });
});

describe('scripted model: streaming completions', () => {
  it('streams a content step as a role chunk, one delta per word, a finish chunk, then the usage chunk', async () => {
    const model = await startModel({
      script: [{ content: 'The answer is 42.', usage: { prompt_tokens: 10, completion_tokens: 5 } }],
    });

    const chunks = await collect(
      await clientFor(model).chat.completions.create({
        model: MODEL,
        messages: userMessage('What is the answer?'),
        stream: true,
        stream_options: { include_usage: true },
      }),
    );

    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === MODEL)).toBe(true);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'The ' },
      { content: 'answer ' },
      { content: 'is ' },
      { content: '42.' },
      {},
      undefined,
    ]);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason ?? null)).toEqual([
      null,
      null,
      null,
      null,
      null,
      'stop',
      null,
    ]);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    });
  });

  it('sends no usage chunk unless stream_options.include_usage is set', async () => {
    const model = await startModel({ script: [{ content: 'Hi.' }] });

    const chunks = await collect(
      await clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Hi'), stream: true }),
    );

    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
  });

  it('streams each tool call as its index, id and name first, then its arguments in pieces', async () => {
    const model = await startModel({
      script: [{ toolCalls: [{ name: 'files__read_file', arguments: { path: '/tmp/a-long-file-name.txt' } }] }],
    });

    const chunks = await collect(
      await clientFor(model).chat.completions.create({ model: MODEL, messages: userMessage('Go'), stream: true }),
    );

    const toolCallDeltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(toolCallDeltas[0]).toEqual({
      index: 0,
      id: expect.stringMatching(/^call_/),
      type: 'function',
      function: { name: 'files__read_file', arguments: '' },
    });
    const argumentPieces = toolCallDeltas.slice(1).map((delta) => delta.function?.arguments);
    expect(argumentPieces.length).toBeGreaterThan(1);
    expect(argumentPieces.join('')).toBe('{"path":"/tmp/a-long-file-name.txt"}');
    expect(toolCallDeltas.slice(1).every((delta) => delta.index === 0 && delta.id === undefined)).toBe(true);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('the client assembles a streamed answer into the same message as the non-streaming answer', async () => {
    const step = {
      content: 'Reading both.',
      toolCalls: [
        { name: 'files__read_file', arguments: { path: '/a' } },
        { name: 'files__read_file', arguments: { path: '/b' } },
      ],
    };
    const model = await startModel({ script: [step] });
    const client = clientFor(model);
    const request = { model: MODEL, messages: userMessage('Read /a and /b') };

    const streamed = await client.chat.completions
      .stream({ ...request, stream_options: { include_usage: true } }, withKey(keyOf('wf-assemble', 1, 1)))
      .finalChatCompletion();
    const whole = await client.chat.completions.create(request, withKey(keyOf('wf-assemble', 1, 1)));

    expect(streamed.id).toBe(whole.id);
    expect(streamed.choices[0]?.finish_reason).toBe('tool_calls');
    expect(streamed.choices[0]?.message.content).toBe(whole.choices[0]?.message.content);
    expect(streamed.choices[0]?.message.tool_calls).toEqual(whole.choices[0]?.message.tool_calls);
    expect(streamed.usage?.completion_tokens).toBe(whole.usage?.completion_tokens);
  });
});

describe('scripted model: other endpoints', () => {
  it('GET /v1/models lists the scripted model and the models requested so far', async () => {
    const model = await startModel({ script: [{ content: 'Hi' }] });
    const client = clientFor(model);
    await client.chat.completions.create({ model: MODEL, messages: userMessage('Hi') });

    const models = await client.models.list();

    expect(models.data.map((entry) => entry.id)).toEqual(['scripted-model', MODEL]);
  });

  it('an unknown endpoint answers 404 naming the endpoints that exist', async () => {
    const model = await startModel({ script: [] });

    const response = await fetch(`${model.baseUrl}/embeddings`, { method: 'POST', body: '{}' });

    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { message: string } };
    expect(body.error.message).toContain('POST /v1/chat/completions');
  });

  it('a body that is not a chat completion request answers 400 saying what is missing', async () => {
    const model = await startModel({ script: [{ content: 'Hi' }] });

    const response = await fetch(`${model.baseUrl}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: MODEL }),
    });

    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('"messages"');
  });
});
