import { ModelApi } from './model-api.js';
import { completion, completionChunks, errorBody, scriptedErrorBody } from './response.js';
import type { WireFormat } from './wire-format.js';

/** OpenAI's Chat Completions API (`POST /v1/chat/completions`): the scripted model's first and default format. */
export const chatCompletions: WireFormat = {
  api: ModelApi.ChatCompletions,
  framing: { namedEvents: false, done: true },
  problem(body) {
    if (typeof body.model !== 'string') return 'The request body has no "model" string.';
    if (!Array.isArray(body.messages)) return 'The request body has no "messages" array.';
    return undefined;
  },
  answer: completion,
  events: (step, context, body) =>
    completionChunks(
      step,
      context,
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
    ),
  errorBody: (_status, message, type, code) => errorBody(message, type, code),
  scriptedErrorBody,
};
