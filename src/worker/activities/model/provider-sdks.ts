import { createRequire } from 'node:module';
import type * as AnthropicSdk from '@anthropic-ai/sdk';
import type * as AnthropicErrors from '@anthropic-ai/sdk/error';
import type * as OpenAISdk from 'openai';
import type * as OpenAIErrors from 'openai/error';

/**
 * The provider SDKs, loaded when first used rather than by every import of the worker: together some 430 modules
 * (a third of a second), and a worker uses one of them, the CLI and most tests neither. Each is its ES module build
 * (the file `import` resolves to), so it is the very module an application's own `import` of the SDK gives, and an
 * error thrown by the application's client is an instance of the classes checked here. Requiring an ES module
 * synchronously needs Node 20.19 or later, which the package requires; the module is cached after the first call.
 */
const load = createRequire(import.meta.url);

/** `openai`: the client class is `default`. */
export function openaiSdk(): typeof OpenAISdk {
  return load('openai/index.mjs') as typeof OpenAISdk;
}

/** `@anthropic-ai/sdk`: the client class is `default`. */
export function anthropicSdk(): typeof AnthropicSdk {
  return load('@anthropic-ai/sdk/index.mjs') as typeof AnthropicSdk;
}

/** The error classes only (a few modules): what telling a failed call's cause needs. */
export function providerErrors(): { openai: typeof OpenAIErrors; anthropic: typeof AnthropicErrors } {
  return {
    openai: load('openai/error.mjs') as typeof OpenAIErrors,
    anthropic: load('@anthropic-ai/sdk/error.mjs') as typeof AnthropicErrors,
  };
}
