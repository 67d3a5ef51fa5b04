import { ApplicationFailure } from '@temporalio/workflow';
import { FailureType } from '../shared/errors.js';
import type { ChatMessage } from '../shared/types.js';
import type { ConversationSettings, IncomingMessage } from './definitions.js';

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
    throw ApplicationFailure.create({ type: FailureType.InvalidMessage, nonRetryable: true, message: why });
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
