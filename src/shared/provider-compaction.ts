import { describeValue } from './errors.js';
import type { ChatMessage, ProviderCompaction } from './types.js';

/**
 * Provider-native compaction (`settings.compaction: "provider"`, docs/models.md#provider-native-compaction): the
 * provider compacts the model's input itself, instead of durable-agent's own summaries. The rules here are pure and
 * shared by the client (which checks the setting before it starts a conversation), the workflow and the worker.
 */

/** The value of `settings.compaction` that chooses the provider's own compaction. */
export const PROVIDER_COMPACTION = 'provider';

/** The model name prefixes whose API can compact natively, and what each uses. */
export const PROVIDER_COMPACTION_APIS: Readonly<Record<string, string>> = {
  'openai-responses': "the Responses API's context_management compaction",
  anthropic: "the Messages API's context editing (compact_20260112, clear_tool_uses_20250919), on its beta endpoint",
};

/** What the providers that can compact are, for error messages. */
export function providerCompactionChoices(): string {
  return Object.entries(PROVIDER_COMPACTION_APIS)
    .map(([prefix, how]) => `${prefix}: models (${how})`)
    .join(' and ');
}

/** What is wrong with a `settings.compaction` value, or `undefined` when it is one of those allowed. */
export function compactionSettingProblem(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'boolean' || value === PROVIDER_COMPACTION) return undefined;
  return (
    `settings.compaction is ${describeValue(value)}: expected true (durable-agent's own summaries, the default), ` +
    `false (none) or "provider" (the provider's own compaction, which ${providerCompactionChoices()} have; ` +
    'docs/models.md#provider-native-compaction).'
  );
}

/**
 * Why `model` (a conversation's model setting, provider prefix included) cannot compact natively, or `undefined` when
 * its provider can. A name without a prefix that can goes to Chat Completions, which has no such option.
 */
export function providerCompactionProblem(model: string): string | undefined {
  const colon = model.indexOf(':');
  const prefix = colon > 0 && colon < model.length - 1 ? model.slice(0, colon) : '';
  if (Object.hasOwn(PROVIDER_COMPACTION_APIS, prefix)) return undefined;
  return (
    `settings.compaction is "provider", but the model "${model}" is served by Chat Completions (an OpenAI-compatible ` +
    `endpoint), which has no provider-native compaction. Only ${providerCompactionChoices()} have it: choose such ` +
    "a model, or set compaction to true for durable-agent's own summaries, which work on every provider."
  );
}

/**
 * The messages a provider sends when the transcript holds its own compaction items: the system messages, then the
 * messages from the assistant message with the latest item of `type` on. The item stands for everything before it, so
 * what came before is not sent again (the Responses API's guide and Anthropic's compaction both say so). Without such
 * an item, the messages as they are.
 */
export function fromLatestProviderCompaction(
  messages: readonly ChatMessage[],
  type: ProviderCompaction['type'],
): readonly ChatMessage[] {
  let latest = -1;
  for (let index = messages.length - 1; index >= 0 && latest < 0; index--) {
    const message = messages[index]!;
    if (message.role === 'assistant' && message.providerCompaction?.type === type) latest = index;
  }
  if (latest < 0) return messages;
  return [...messages.slice(0, latest).filter((message) => message.role === 'system'), ...messages.slice(latest)];
}
