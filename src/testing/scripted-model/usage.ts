import type { ScriptUsage } from './script.js';

/**
 * A step's token counts in one meaning, whichever spelling its script used, so the same step costs the same through
 * every API; each format reports them in its own shape.
 */
export interface StepTokens {
  /** Every token the model read, cache reads and writes included. */
  input: number;
  output: number;
  total: number;
  /** Of `input`, read from the prompt cache; `undefined` when the step reports none. */
  cacheRead: number | undefined;
  /** Of `input`, written to the prompt cache; `undefined` when the step reports none. */
  cacheWrite: number | undefined;
  /** Of `output`, spent reasoning; `undefined` when the step reports none. */
  reasoning: number | undefined;
}

/**
 * Anthropic's spelling counts the cache apart from `prompt_tokens` (its `input_tokens` leaves it out); OpenAI's
 * `prompt_tokens_details.cached_tokens` is a part of `prompt_tokens`. The validator refuses a step that mixes them.
 */
export function scriptedTokens(usage: ScriptUsage): StepTokens {
  const input = usage.prompt_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0);
  return {
    input,
    output: usage.completion_tokens,
    total: usage.total_tokens ?? input + usage.completion_tokens,
    cacheRead: usage.prompt_tokens_details?.cached_tokens ?? usage.cache_read_input_tokens,
    cacheWrite: usage.cache_creation_input_tokens,
    reasoning: usage.completion_tokens_details?.reasoning_tokens,
  };
}

/** Counts estimated from lengths: nothing cached, nothing reasoned. */
export function estimatedTokens(input: number, output: number): StepTokens {
  return { input, output, total: input + output, cacheRead: undefined, cacheWrite: undefined, reasoning: undefined };
}
