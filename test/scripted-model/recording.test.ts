import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../src/testing/scripted-model/index.js';
import { clientFor, keyOf, MODEL, useScriptedModels, withKey } from './helpers.js';

const startModel = useScriptedModels();

const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'files__read_file',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

describe('scripted model: recorded requests', () => {
  it('records the conversation, key, step, messages, tools, tool_choice, options and headers of each request', async () => {
    const model = await startModel({
      script: [{ toolCalls: [{ name: 'files__read_file', arguments: { path: '/a' } }] }],
    });
    const messages = [
      { role: 'system' as const, content: 'You are terse.' },
      { role: 'user' as const, content: 'Read /a' },
    ];

    await clientFor(model).chat.completions.create(
      {
        model: MODEL,
        messages,
        tools,
        tool_choice: 'auto',
        max_completion_tokens: 256,
        temperature: 0.2,
        stream: true,
        stream_options: { include_usage: true },
      },
      withKey(keyOf('team/wf-record', 2, 1)),
    );

    expect(model.requests).toHaveLength(1);
    const [request] = model.requests;
    expect(request).toMatchObject({
      sequence: 0,
      conversation: 'team/wf-record',
      idempotencyKey: 'team/wf-record/run-1/turn-2/round-1',
      stepIndex: 0,
      status: 200,
      failure: null,
      messages,
      tools,
      toolChoice: 'auto',
      options: {
        model: MODEL,
        max_completion_tokens: 256,
        temperature: 0.2,
        stream: true,
        stream_options: { include_usage: true },
      },
    });
    expect(request?.options).not.toHaveProperty('messages');
    expect(request?.headers['idempotency-key']).toBe('team/wf-record/run-1/turn-2/round-1');
    expect(request?.headers.authorization).toBe('Bearer test');
    expect(Number.isNaN(Date.parse(request?.receivedAt ?? ''))).toBe(false);
  });

  it('timing: the first text leaves after the delay and the chunks before it; a tool call has none', async () => {
    const model = await startModel({
      script: [
        { content: 'first token', delayMs: 120, chunkDelayMs: 40 },
        { toolCalls: [{ name: 'files__read_file', arguments: { path: '/a' } }] },
      ],
    });
    const client = clientFor(model);
    const ask = async () => {
      const stream = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
      for await (const chunk of stream) void chunk;
    };
    await ask();
    await ask();

    const [answer, toolCall] = model.requests;
    const answerTiming = answer?.timing;
    // The role chunk goes after the delay, the first word one chunk delay later.
    expect(answerTiming?.firstTextMs).not.toBeNull();
    expect((answerTiming?.firstTextMs ?? 0) - (answerTiming?.receivedMs ?? 0)).toBeGreaterThanOrEqual(155);
    expect(Math.abs((answerTiming?.receivedMs ?? 0) - Date.parse(answer?.receivedAt ?? ''))).toBeLessThan(50);
    expect(toolCall?.timing.firstTextMs).toBeNull();
  });

  it('requestsFor returns one conversation in order of arrival', async () => {
    const model = await startModel({ script: [{ content: 'a' }, { content: 'b' }] });
    const client = clientFor(model);
    const ask = (workflowId: string, round: number) =>
      client.chat.completions.create(
        { model: MODEL, messages: [{ role: 'user', content: `${workflowId} ${round}` }] },
        withKey(keyOf(workflowId, 1, round)),
      );

    await ask('wf-1', 1);
    await ask('wf-2', 1);
    await ask('wf-1', 2);

    expect(model.requestsFor('wf-1').map((request) => request.messages[0]?.content)).toEqual(['wf-1 1', 'wf-1 2']);
    expect(model.requestsFor('wf-unknown')).toEqual([]);
  });

  it('GET /_scripted/requests returns the same records over HTTP, optionally for one conversation', async () => {
    const model = await startModel({ script: [{ content: 'a' }] });
    const client = clientFor(model);
    await client.chat.completions.create(
      { model: MODEL, messages: [{ role: 'user', content: 'one' }] },
      withKey(keyOf('wf-x', 1, 1)),
    );
    await client.chat.completions.create(
      { model: MODEL, messages: [{ role: 'user', content: 'two' }] },
      withKey(keyOf('wf-y', 1, 1)),
    );
    const origin = new URL(model.baseUrl).origin;

    const all = (await (await fetch(`${origin}/_scripted/requests`)).json()) as RecordedRequest[];
    const forY = (await (await fetch(`${origin}/_scripted/requests?conversation=wf-y`)).json()) as RecordedRequest[];

    expect(all).toEqual(JSON.parse(JSON.stringify(model.requests)));
    expect(forY.map((request) => request.messages[0]?.content)).toEqual(['two']);
  });

  it('reset() forgets the requests and starts every conversation again, optionally with a new script', async () => {
    const model = await startModel({ script: [{ content: 'old' }] });
    const client = clientFor(model);
    const ask = async () =>
      (
        await client.chat.completions.create(
          { model: MODEL, messages: [{ role: 'user', content: 'hi' }] },
          withKey(keyOf('wf-reset', 1, 1)),
        )
      ).choices[0]?.message.content;
    await ask();

    model.reset();
    const afterReset = await ask();
    model.reset([{ content: 'new' }]);
    const afterNewScript = await ask();

    expect([afterReset, afterNewScript]).toEqual(['old', 'new']);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.sequence).toBe(0);
  });

  it('POST /_scripted/reset does the same over HTTP and validates a new script', async () => {
    const model = await startModel({ script: [{ content: 'old' }] });
    const client = clientFor(model);
    await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    const origin = new URL(model.baseUrl).origin;

    const reset = await fetch(`${origin}/_scripted/reset`, { method: 'POST' });
    const badScript = await fetch(`${origin}/_scripted/reset`, {
      method: 'POST',
      body: JSON.stringify({ script: [{ contnet: 'typo' }] }),
    });
    const newScript = await fetch(`${origin}/_scripted/reset`, {
      method: 'POST',
      body: JSON.stringify({ script: [{ content: 'new' }] }),
    });
    const response = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });

    expect(reset.status).toBe(204);
    expect(badScript.status).toBe(400);
    expect(((await badScript.json()) as { error: { message: string } }).error.message).toContain('step 0');
    expect(newScript.status).toBe(204);
    expect(response.choices[0]?.message.content).toBe('new');
    expect(model.requests).toHaveLength(1);
  });
});
