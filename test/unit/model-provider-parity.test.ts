import { describe, expect, it } from 'vitest';
import type { ChatMessage, ResponseFormat } from '../../src/shared/types.js';
import { CACHED_USAGE } from '../helpers/cached-usage.js';
import { providerCallInput, useModelActivity } from '../helpers/model-call.js';

const system: ChatMessage = { role: 'system', content: 'Answer in JSON.' };
const question: ChatMessage = { role: 'user', content: 'Who is Ada?' };

const format: ResponseFormat = {
  name: 'person',
  schema: {
    type: 'object',
    properties: { name: { type: 'string' } },
    required: ['name'],
    additionalProperties: false,
  },
  strict: true,
};

describe('what every provider gets and gives alike', () => {
  const setUp = useModelActivity();

  it('structured output: the response format reaches each API as its own option', async () => {
    // One step: each API's conversation (its workflow id) starts the script afresh.
    const answer = '{"name":"Ada"}';
    const { model, callModel } = await setUp([{ content: answer }], [system, question]);

    for (const name of ['gpt-scripted', 'openai-responses:gpt-scripted', 'anthropic:claude-scripted']) {
      const result = await callModel(providerCallInput(name, [system, question], { responseFormat: format }));
      expect(result.message.content).toBe(answer);
    }

    const [chat, responses, messages] = model.requests;
    expect(chat?.api).toBe('chat-completions');
    expect(chat?.body.response_format).toEqual({ type: 'json_schema', json_schema: format });
    expect(responses?.api).toBe('responses');
    expect(responses?.body.text).toEqual({
      format: { type: 'json_schema', name: 'person', schema: format.schema, strict: true },
    });
    expect(messages?.api).toBe('messages');
    expect(messages?.body.output_config).toEqual({ format: { type: 'json_schema', schema: format.schema } });
  });

  it('structured output: a call without a response format sends none of the options', async () => {
    const { model, callModel } = await setUp([{ content: 'a' }], [system, question]);

    for (const name of ['gpt-scripted', 'openai-responses:gpt-scripted', 'anthropic:claude-scripted']) {
      await callModel(providerCallInput(name, [system, question]));
    }

    for (const request of model.requests) {
      expect(request.body).not.toHaveProperty('response_format');
      expect(request.body).not.toHaveProperty('text');
      expect(request.body).not.toHaveProperty('output_config');
    }
  });

  it('usage: one scripted step gives the same input, cache reads and reasoning through every API', async () => {
    const { callModel } = await setUp([{ content: 'x', usage: CACHED_USAGE }], [system, question]);

    // Each API's conversation (its workflow id) starts the script afresh: all three get the one step.
    const seen = [];
    for (const name of ['gpt-scripted', 'openai-responses:gpt-scripted', 'anthropic:claude-scripted']) {
      seen.push((await callModel(providerCallInput(name, [system, question]))).usage);
    }

    const shared = {
      inputTokens: 3_400,
      outputTokens: 100,
      totalTokens: 3_500,
      cacheReadTokens: 2_000,
      reasoningTokens: 40,
    };
    // The OpenAI APIs report no cache writes: they bill none, and the written tokens are input like any other.
    expect(seen).toEqual([shared, shared, { ...shared, cacheWriteTokens: 400 }]);
  });
});
