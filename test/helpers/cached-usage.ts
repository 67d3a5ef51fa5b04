/**
 * A scripted answer's usage with the prompt cache in Anthropic's spelling (apart from `prompt_tokens`): the model read
 * 1,000 + 2,000 (cache reads) + 400 (cache writes) = 3,400 tokens and wrote 100, 40 of them reasoning.
 */
export const CACHED_USAGE = {
  prompt_tokens: 1_000,
  completion_tokens: 100,
  cache_read_input_tokens: 2_000,
  cache_creation_input_tokens: 400,
  completion_tokens_details: { reasoning_tokens: 40 },
};

/** Prices of `claude-scripted` per million tokens: $1 input, $0.50 cache read, $1.25 cache write, $2 output. */
export const CLAUDE_PRICES = {
  'claude-scripted': { input_mtok: 1, output_mtok: 2, cache_read_mtok: 0.5, cache_write_mtok: 1.25 },
};

/** What `CACHED_USAGE` costs at `CLAUDE_PRICES`: 1,000 + 2,000 × 0.5 + 400 × 1.25 + 100 × 2, in millionths of a dollar. */
export const CACHED_USAGE_USD = 0.0027;
