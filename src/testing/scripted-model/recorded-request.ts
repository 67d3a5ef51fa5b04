import type OpenAI from 'openai';
import type { JsonObject } from '../../shared/types.js';
import type { ModelApi } from './model-api.js';

/** Every field of a chat completion request other than the messages and the tools, e.g. `model`, `stream`. */
export type RequestOptions = Omit<OpenAI.Chat.ChatCompletionCreateParams, 'messages' | 'tools' | 'tool_choice'>;

/**
 * One request as the scripted model received it. Plain JSON, so it reads the same in code and from
 * `GET /_scripted/requests`.
 */
export interface RecordedRequest {
  /** The API the request came to: `chat-completions`, `messages` (Anthropic) or `responses` (OpenAI). */
  api: ModelApi;
  /** The request body as it arrived, for every API. */
  body: JsonObject;
  /** Order of arrival across all conversations, from 0. */
  sequence: number;
  /** The workflow id taken from the idempotency key, or `DEFAULT_CONVERSATION`. */
  conversation: string;
  /** The `Idempotency-Key` header, or null. */
  idempotencyKey: string | null;
  /** Index of the script step that answered, or null when none did (past the end, invalid request). */
  stepIndex: number | null;
  /**
   * True when the request repeated the idempotency key of an earlier request that got a content or tool-call step,
   * and got that same step again (a retry), whether or not the earlier answer was delivered.
   */
  replayed: boolean;
  /** HTTP status of the answer (200 also when the script dropped the connection mid-stream). */
  status: number;
  /** Why the scripted model could not answer from the script (past the end, a failing step function), or null. */
  failure: string | null;
  /** The messages of a Chat Completions request; the other APIs' requests leave it empty (read `body`). */
  messages: OpenAI.Chat.ChatCompletionMessageParam[];
  tools: OpenAI.Chat.ChatCompletionTool[] | null;
  toolChoice: OpenAI.Chat.ChatCompletionToolChoiceOption | null;
  options: RequestOptions;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** ISO 8601 time of arrival. */
  receivedAt: string;
  /**
   * When the request arrived and when the first piece of answer text left (null until then, and for an answer without
   * text), in milliseconds since the epoch with fractions (`performance.timeOrigin + performance.now()`): the model's
   * own time to first token is the difference, what a client adds is measured against it.
   */
  timing: { receivedMs: number; firstTextMs: number | null };
}
