import { completion, completionChunks, errorBody, scriptedErrorBody } from './response.js';
import { missingField, type WireFormat } from './wire-format.js';

/** OpenAI's Chat Completions API (`POST /v1/chat/completions`): the scripted model's first and default format. */
export const chatCompletions: WireFormat = {
  api: 'chat-completions',
  framing: { namedEvents: false, done: true },
  problem(body) {
    const missing = missingField(body, { model: 'string', messages: 'array' });
    return missing && `The request body has no "${missing.name}" ${missing.kind}.`;
  },
  answer: completion,
  events: (step, context, body) =>
    completionChunks(
      step,
      context,
      (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
    ),
  carriesText: (event) =>
    Boolean((event as { choices?: { delta?: { content?: unknown } }[] }).choices?.[0]?.delta?.content),
  errorBody: (_status, message, type, code) => errorBody(message, type, code),
  scriptedErrorBody,
};
