import { fileURLToPath } from 'node:url';
import type { ContenderDefinition } from './index.js';

/**
 * The model APIs `--providers` runs durable-agent on, side by side in one run. `chat-completions` is the
 * `durable-agent` contender itself; each other one is a contender of its own, the same worker whose conversations name
 * that provider in their model, so the figures (history bytes per step above all) compare the providers.
 */
export const BENCH_PROVIDERS = ['chat-completions', 'anthropic', 'openai-responses'] as const;
export type BenchProvider = (typeof BENCH_PROVIDERS)[number];

const LABELS: Record<BenchProvider, string> = {
  'chat-completions': 'Chat Completions',
  anthropic: 'Anthropic Messages',
  'openai-responses': 'OpenAI Responses',
};

/** The conversation's `model` setting on each provider; none for Chat Completions, the worker's default provider. */
export const BENCH_MODELS: Record<BenchProvider, string | undefined> = {
  'chat-completions': undefined,
  anthropic: 'anthropic:scripted-model',
  'openai-responses': 'openai-responses:scripted-model',
};

/** `BENCH_PROVIDER` of a contender's environment, checked. Default: Chat Completions. */
export function benchProviderOf(value: string | undefined): BenchProvider {
  if (value === undefined || value === '') return 'chat-completions';
  if ((BENCH_PROVIDERS as readonly string[]).includes(value)) return value as BenchProvider;
  throw new Error(`BENCH_PROVIDER: expected one of ${BENCH_PROVIDERS.join(', ')}, got "${value}"`);
}

/** The contenders of `--providers a,b`: one per provider but Chat Completions (that one is `durable-agent`). */
export function providerContenders(list: string): ContenderDefinition[] {
  const asked = list.split(',').map((name) => name.trim());
  const unknown = asked.filter((name) => !(BENCH_PROVIDERS as readonly string[]).includes(name));
  if (unknown.length > 0 || asked.length === 0) {
    throw new Error(
      `--providers: unknown provider ${unknown.map((name) => `"${name}"`).join(', ')}; ` +
        `expected a comma-separated list of ${BENCH_PROVIDERS.join(', ')}`,
    );
  }
  return (asked as BenchProvider[])
    .filter((provider) => provider !== 'chat-completions')
    .map((provider) => ({
      name: `durable-agent-${provider}`,
      label: `durable-agent on ${LABELS[provider]}`,
      script: fileURLToPath(new URL('./durable-agent.js', import.meta.url)),
      durable: true,
      env: { BENCH_PROVIDER: provider },
    }));
}
