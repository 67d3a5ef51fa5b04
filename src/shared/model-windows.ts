/**
 * The context windows of well-known models, in tokens, for compaction (docs/models.md#compaction). A model's name is
 * matched without its provider prefix (`anthropic:`, `openai-responses:`), by the longest entry it starts with, so a
 * dated snapshot (`gpt-4o-2024-08-06`) finds its family. A model not listed has an unknown window: compaction then
 * starts only when the model refuses an input as too long (and learns the window from the refusal), unless
 * `settings.contextWindow` names it.
 *
 * Windows are the input a model accepts; where a provider documents a lower input limit than its window (the GPT-5
 * family's 272,000 of 400,000), the input limit is listed.
 */
export const MODEL_CONTEXT_WINDOWS: Readonly<Record<string, number>> = {
  'gpt-3.5-turbo': 16_385,
  'gpt-4': 8_192,
  'gpt-4-32k': 32_768,
  'gpt-4-turbo': 128_000,
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  'gpt-5': 272_000,
  'gpt-5-mini': 272_000,
  'gpt-5-nano': 272_000,
  'gpt-5.1': 272_000,
  o1: 200_000,
  o3: 200_000,
  'o3-mini': 200_000,
  'o4-mini': 200_000,
  'claude-3': 200_000,
  'claude-3-5': 200_000,
  'claude-3-7': 200_000,
  'claude-haiku-4': 200_000,
  'claude-sonnet-4': 200_000,
  'claude-opus-4': 200_000,
};

const PROVIDER_PREFIX = /^(?:openai|anthropic|openai-responses):/;

/** The window of `model` from {@link MODEL_CONTEXT_WINDOWS}, or `undefined` when the table does not know it. */
export function tableContextWindow(model: string | undefined): number | undefined {
  if (model === undefined) return undefined;
  const name = model.replace(PROVIDER_PREFIX, '');
  let best: string | undefined;
  for (const entry of Object.keys(MODEL_CONTEXT_WINDOWS)) {
    const matches = name === entry || name.startsWith(`${entry}-`) || name.startsWith(`${entry}.`);
    if (matches && (best === undefined || entry.length > best.length)) best = entry;
  }
  return best === undefined ? undefined : MODEL_CONTEXT_WINDOWS[best];
}

/** What a context-length refusal says about the window, in the provider's tokens, when its text names them. */
export interface RefusalLimits {
  /** The window the provider named (`maximum context length is N`, `> N maximum`). */
  limit?: number;
  /** The tokens the refused input had, as the provider counted them. */
  requested?: number;
}

/**
 * The numbers in a context-length refusal: OpenAI's "This model's maximum context length is 8192 tokens. However, your
 * messages resulted in 9001 tokens", Anthropic's "prompt is too long: 210000 tokens > 200000 maximum". The Responses
 * API's refusal names none.
 */
export function refusalLimits(message: string): RefusalLimits {
  const number = (text: string | undefined) => (text === undefined ? undefined : Number(text.replace(/,/g, '')));
  const anthropic = /(\d[\d,]*) tokens? > (\d[\d,]*) maximum/i.exec(message);
  if (anthropic) return { requested: number(anthropic[1]), limit: number(anthropic[2]) };
  const limit = /maximum context length is (\d[\d,]*)/i.exec(message)?.[1];
  const requested = /resulted in (\d[\d,]*) tokens/i.exec(message)?.[1];
  return {
    ...(limit !== undefined ? { limit: number(limit) } : {}),
    ...(requested !== undefined ? { requested: number(requested) } : {}),
  };
}

/**
 * The window to assume after a refusal, in the estimated tokens compaction counts in (src/shared/context.ts): the
 * provider's limit scaled by how its count of the refused input compares with the estimate, or, when the refusal names
 * no numbers, a little under the estimate of the input it refused.
 */
export function learnedWindow(limits: RefusalLimits, estimatedTokens: number): number {
  const { limit, requested } = limits;
  if (limit !== undefined && requested !== undefined && requested > 0) {
    return Math.max(1, Math.floor((limit * estimatedTokens) / requested));
  }
  if (limit !== undefined) return Math.min(limit, Math.max(1, Math.floor(estimatedTokens * 0.95)));
  return Math.max(1, Math.floor(estimatedTokens * 0.9));
}
