/**
 * The model APIs the scripted model answers, each at its own endpoint, from the same script: `chat-completions`
 * (`/v1/chat/completions`), `messages` (Anthropic, `/v1/messages`), `responses` (OpenAI, `/v1/responses`).
 */
export type ModelApi = 'chat-completions' | 'messages' | 'responses';
