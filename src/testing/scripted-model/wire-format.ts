import type { JsonValue } from '../../shared/types.js';
import type { ModelApi } from './model-api.js';
import type { CompletionStep, ResponseContext } from './response.js';

/** The first of `fields` the body lacks (or has of another type), with the type it should have. */
export function missingField(
  body: Record<string, unknown>,
  fields: Record<string, 'string' | 'number' | 'array'>,
): { name: string; kind: string } | undefined {
  for (const [name, kind] of Object.entries(fields)) {
    const value = body[name];
    if (kind === 'array' ? !Array.isArray(value) : typeof value !== kind) return { name, kind };
  }
  return undefined;
}

/** How one API's requests are checked and its answers, streams and errors are shaped. */
export interface WireFormat {
  api: ModelApi;
  /** What is wrong with a request body (already a JSON object), or undefined when it can be answered. */
  problem(body: Record<string, unknown>): string | undefined;
  /** The body of a non-streaming answer. */
  answer(step: CompletionStep, context: ResponseContext): unknown;
  /** The events of a streaming answer, in order. */
  events(step: CompletionStep, context: ResponseContext, body: Record<string, unknown>): unknown[];
  /** Whether an event of a streaming answer carries answer text (not a role, a tool call or a stop). */
  carriesText(event: unknown): boolean;
  /** How the stream is framed: an `event:` line named after each event's `type`, and a closing `data: [DONE]`. */
  framing: { namedEvents: boolean; done: boolean };
  /** The error body this API's client reads. `type` is the OpenAI-style type, `code` the scripted model's own. */
  errorBody(status: number, message: string, type: string, code: string | null): JsonValue;
  /** The default body of a script's error step: what a real server of this API says for that status. */
  scriptedErrorBody(status: number, stepIndex: number, scriptName: string): JsonValue;
}
