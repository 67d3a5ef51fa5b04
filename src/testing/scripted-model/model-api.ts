/** The model APIs the scripted model answers, each at its own endpoint, from the same script. */
export const ModelApi = {
  ChatCompletions: 'chat-completions',
  Messages: 'messages',
  Responses: 'responses',
} as const;

export type ModelApi = (typeof ModelApi)[keyof typeof ModelApi];
