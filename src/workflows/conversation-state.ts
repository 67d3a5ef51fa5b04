import { expectedFailure, FailureType } from '../shared/errors.js';
import { outputFormatProblem } from './structured-output.js';
import { jsonBytes } from '../shared/payload-limits.js';
import type { ChatMessage } from '../shared/types.js';
import type { ConversationSettings, IncomingMessage } from './definitions.js';
import type { TurnResult } from './turn-result.js';

/**
 * Recent results carried into the next run, in bytes of JSON: an ask retried just after a rollover (its message was
 * carried and answered by a run that rolled over again at once) still gets its answer.
 */
export const MAX_CARRIED_RESULTS_BYTES = 64 * 1024;
/**
 * Largest page a query answers with, in bytes of JSON (a character of Chinese is 3): with the turn's tool list
 * (at most `MAX_PART_BYTES`) well under Temporal's 2 MiB payload limit and the 4 MB gRPC message limit.
 */
export const MAX_PAGE_BYTES = 1024 * 1024;

/** Message ids remembered for deduplication, carried across continue-as-new. */
export const MAX_REMEMBERED_IDS = 2_000;
export const DEFAULT_MAX_MESSAGE_CHARS = 100_000;
export const MAX_MESSAGE_ID_CHARS = 200;
/** Transcript carried into the next run, in characters of JSON: the whole carried state stays well under 1 MiB. */
export const MAX_CARRIED_TRANSCRIPT_CHARS = 512 * 1024;

/** A bounded, insertion-ordered set of ids: the oldest are forgotten first. */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(
    initial: readonly string[],
    private readonly capacity = MAX_REMEMBERED_IDS,
  ) {
    for (const id of initial) this.add(id);
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    this.ids.delete(id);
    this.ids.add(id);
    while (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value as string;
      this.ids.delete(oldest);
    }
  }

  toArray(): string[] {
    return [...this.ids];
  }
}

/** Reject malformed input before it touches the conversation (used by the `ask` validator and the signal). */
export function validateMessage(message: unknown, settings: ConversationSettings): asserts message is IncomingMessage {
  const maxChars = settings.maxMessageChars ?? DEFAULT_MAX_MESSAGE_CHARS;
  const fail = (why: string) => {
    throw expectedFailure({ type: FailureType.InvalidMessage, nonRetryable: true, message: why });
  };
  if (message === null || typeof message !== 'object') return fail('A message must be an object { id, content }.');
  const { id, content } = message as Partial<Record<keyof IncomingMessage, unknown>>;
  if (typeof id !== 'string' || id.trim() === '' || id.length > MAX_MESSAGE_ID_CHARS) {
    return fail(`A message needs an "id": a non-empty string of at most ${MAX_MESSAGE_ID_CHARS} characters.`);
  }
  if (typeof content !== 'string' || content.trim() === '') {
    return fail('A message needs "content": a non-empty string.');
  }
  if (content.length > maxChars) {
    return fail(`The message has ${content.length} characters; the limit is ${maxChars} (settings.maxMessageChars).`);
  }
  const { output } = message as { output?: unknown };
  const outputProblem = output === undefined ? undefined : outputFormatProblem(output);
  if (outputProblem !== undefined) return fail(outputProblem);
}

/**
 * The part of the transcript carried into the next run: leading system messages and the most recent whole turns
 * that fit {@link MAX_CARRIED_TRANSCRIPT_CHARS}. Older turns stay readable in the earlier runs' histories.
 */
export function carriedTranscript(
  messages: readonly ChatMessage[],
  maxChars = MAX_CARRIED_TRANSCRIPT_CHARS,
): { messages: ChatMessage[]; dropped: number } {
  let systemEnd = 0;
  while (messages[systemEnd]?.role === 'system') systemEnd++;
  let chars = messages.slice(0, systemEnd).reduce((sum, message) => sum + JSON.stringify(message).length, 0);
  let keepFrom = messages.length;
  let turnChars = 0;
  for (let index = messages.length - 1; index >= systemEnd; index--) {
    turnChars += JSON.stringify(messages[index]).length;
    if (messages[index]?.role !== 'user') continue;
    if (chars + turnChars > maxChars) break;
    chars += turnChars;
    turnChars = 0;
    keepFrom = index;
  }
  return { messages: [...messages.slice(0, systemEnd), ...messages.slice(keepFrom)], dropped: keepFrom - systemEnd };
}

/** The newest of `results` that fit {@link MAX_CARRIED_RESULTS_BYTES}, oldest first. */
export function carriedResults(results: readonly TurnResult[]): TurnResult[] {
  const kept: TurnResult[] = [];
  let bytes = 0;
  for (let index = results.length - 1; index >= 0; index--) {
    const result = results[index] as TurnResult;
    bytes += jsonBytes(result);
    if (bytes > MAX_CARRIED_RESULTS_BYTES) break;
    kept.unshift(result);
  }
  return kept;
}

/** Items from `from`, at most `limit` and about {@link MAX_PAGE_BYTES} bytes of JSON (always at least one). */
export function page<T>(items: readonly T[], from: number, limit: number, maxBytes = MAX_PAGE_BYTES): T[] {
  const result: T[] = [];
  let bytes = 0;
  for (let index = Math.max(0, from); index < items.length && result.length < limit; index++) {
    const item = items[index] as T;
    bytes += jsonBytes(item);
    if (bytes > maxBytes && result.length > 0) break;
    result.push(item);
  }
  return result;
}
