import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { thinkingSignature } from '../../src/testing/scripted-model/anthropic-messages.js';
import type { ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { keyOf, useScriptedModels } from './helpers.js';

const startModel = useScriptedModels();
const MODEL = 'claude-scripted';

function anthropicFor(model: ScriptedModel): Anthropic {
  return new Anthropic({ baseURL: model.anthropicBaseUrl, apiKey: 'test', maxRetries: 0 });
}

const request = {
  model: MODEL,
  max_tokens: 1000,
  messages: [{ role: 'user' as const, content: 'Hi' }],
};

const THINKING_TOOL_STEP = {
  reasoning: 'The user wants the file.',
  content: 'Reading it.',
  toolCalls: [{ name: 'files__read_file', arguments: { path: 'a.txt' } }],
};

describe('scripted model: Anthropic Messages (/v1/messages)', () => {
  it('answers with thinking, text and tool_use blocks, the mapped stop reason and usage with cache counts', async () => {
    const model = await startModel({
      script: [
        {
          ...THINKING_TOOL_STEP,
          usage: {
            prompt_tokens: 10,
            completion_tokens: 5,
            cache_creation_input_tokens: 7,
            cache_read_input_tokens: 3,
          },
        },
      ],
    });

    const message = await anthropicFor(model).messages.create(request);

    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      {
        type: 'thinking',
        thinking: 'The user wants the file.',
        signature: thinkingSignature('The user wants the file.'),
      },
      { type: 'text', text: 'Reading it.', citations: null },
      {
        type: 'tool_use',
        id: expect.stringMatching(/^toolu_/) as string,
        name: 'files__read_file',
        input: { path: 'a.txt' },
      },
    ]);
    expect(message.usage).toMatchObject({
      input_tokens: 10,
      output_tokens: 5,
      cache_creation_input_tokens: 7,
      cache_read_input_tokens: 3,
    });
    expect(model.requests[0]).toMatchObject({ api: 'messages', body: { model: MODEL, max_tokens: 1000 } });
  });

  it('streams the events Anthropic sends, which the SDK assembles into the same message', async () => {
    const model = await startModel({
      script: [THINKING_TOOL_STEP],
    });
    const client = anthropicFor(model);
    const stream = await client.messages.create({ ...request, stream: true });
    const types: string[] = [];
    const deltas = new Set<string>();
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta') deltas.add(event.delta.type);
    }
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect([...deltas].sort()).toEqual(['input_json_delta', 'signature_delta', 'text_delta', 'thinking_delta']);

    model.reset();
    const final = await client.messages.stream(request).finalMessage();
    expect(final.content.map((block) => block.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(final.content[2]).toMatchObject({ input: { path: 'a.txt' } });
    expect(final.stop_reason).toBe('tool_use');
  });

  it('errors are shaped as Anthropic sends them: a 529 with retry-after, a 400 invalid_request_error', async () => {
    const model = await startModel({
      script: [{ error: { status: 529, headers: { 'retry-after': '2' } } }, { error: { status: 400 } }],
    });
    const client = anthropicFor(model);
    const headers = { 'Idempotency-Key': keyOf('conversation-errors', 1, 1) };

    const overloaded = await client.messages.create(request, { headers }).catch((error: unknown) => error);
    expect(overloaded).toBeInstanceOf(Anthropic.APIError);
    expect(overloaded).toMatchObject({ status: 529, error: { type: 'error', error: { type: 'overloaded_error' } } });
    expect((overloaded as { headers: Headers }).headers.get('retry-after')).toBe('2');

    const invalid = await client.messages.create(request, { headers }).catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
    expect(invalid).toMatchObject({ error: { error: { type: 'invalid_request_error' } } });
  });

  it('a request without max_tokens is refused with a 400 that says which field is missing', async () => {
    const model = await startModel({ script: [{ content: 'unused' }] });
    const response = await fetch(`${model.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: MODEL, messages: [] }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'max_tokens: Field required' },
    });
  });
});
