import { describe, expect, it } from 'vitest';
import { ModelProviders, parseModelName, ProviderName } from '../../src/worker/activities/model/providers/index.js';
import { FailureType } from '../../src/shared/errors.js';

describe('parseModelName', () => {
  it('model providers: a known prefix names the provider, the rest is the model', () => {
    expect(parseModelName('anthropic:claude-sonnet-4-5')).toEqual({
      provider: ProviderName.Anthropic,
      model: 'claude-sonnet-4-5',
    });
    expect(parseModelName('openai:gpt-5.1')).toEqual({ provider: ProviderName.ChatCompletions, model: 'gpt-5.1' });
    expect(parseModelName('openai-responses:gpt-5.1')).toEqual({
      provider: ProviderName.OpenAIResponses,
      model: 'gpt-5.1',
    });
  });

  it('model providers: a plain name, or one whose colon is part of it, goes whole to Chat Completions', () => {
    expect(parseModelName('gpt-4o-mini')).toEqual({ provider: ProviderName.ChatCompletions, model: 'gpt-4o-mini' });
    expect(parseModelName('llama3:8b')).toEqual({ provider: ProviderName.ChatCompletions, model: 'llama3:8b' });
    expect(parseModelName('anthropic:')).toEqual({ provider: ProviderName.ChatCompletions, model: 'anthropic:' });
  });

  it('model providers: a provider without a client fails non-retryable, naming the variable to set', () => {
    const providers = new ModelProviders({
      openai: { chat: { completions: { create: () => Promise.reject(new Error('unused')) } } },
    });
    expect(providers.choose('gpt-4o-mini').provider.name).toBe(ProviderName.ChatCompletions);
    let thrown: unknown;
    try {
      providers.choose('anthropic:claude-sonnet-4-5');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ type: FailureType.ModelNotConfigured, nonRetryable: true });
    expect(String((thrown as Error).message)).toContain('ANTHROPIC_API_KEY');
  });
});
