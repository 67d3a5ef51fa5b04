import { ApplicationFailure } from '@temporalio/common';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { FailureType } from '../../../../shared/errors.js';
import { anthropicProvider, type AnthropicMessagesClient } from './anthropic.js';
import { chatCompletionsProvider, type ChatCompletionsClient } from './chat-completions.js';
import { openAIResponsesProvider } from './openai-responses.js';
import { parseModelName, ProviderName, type ModelProvider } from './provider.js';

export { parseModelName, ProviderName, type ModelProvider, type ProviderRequest } from './provider.js';

/** The clients the worker created, one per API; a provider whose client is missing cannot be chosen. */
export interface ProviderClients {
  /** Serves plain names and `openai:` ones (Chat Completions), and `openai-responses:` ones when it has `responses`. */
  openai: ChatCompletionsClient | OpenAI;
  /** Serves `anthropic:` names; created with `maxRetries: 0` (Temporal retries). Default: none. */
  anthropic?: AnthropicMessagesClient | Anthropic;
}

/** The worker's providers, made once per worker and chosen per model call by the conversation's model name. */
export class ModelProviders {
  private readonly providers = new Map<ProviderName, ModelProvider>();

  constructor(clients: ProviderClients) {
    this.providers.set(ProviderName.ChatCompletions, chatCompletionsProvider(clients.openai));
    // The Responses API comes with the same client: an `openai` client, or a stub that also has `responses.create`.
    if ('responses' in clients.openai) {
      this.providers.set(ProviderName.OpenAIResponses, openAIResponsesProvider(clients.openai));
    }
    if (clients.anthropic) this.providers.set(ProviderName.Anthropic, anthropicProvider(clients.anthropic));
  }

  /** The provider of a model name and the name it knows the model by. */
  choose(name: string): { provider: ModelProvider; model: string } {
    const choice = parseModelName(name);
    const provider = this.providers.get(choice.provider);
    if (provider === undefined) throw notConfigured(name, choice.provider);
    return { provider, model: choice.model };
  }
}

const SETUP: Record<ProviderName, string> = {
  [ProviderName.ChatCompletions]: 'OPENAI_API_KEY',
  [ProviderName.Anthropic]: 'ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another endpoint)',
  [ProviderName.OpenAIResponses]: 'OPENAI_API_KEY',
};

function notConfigured(name: string, provider: ProviderName): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.ModelNotConfigured,
    nonRetryable: true,
    message:
      `The model "${name}" needs the ${provider} provider, which this worker has no client for. ` +
      `Set ${SETUP[provider]} in the worker's environment and restart it, or choose another model.`,
  });
}
