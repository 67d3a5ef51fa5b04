import type { ApplicationFailure } from '@temporalio/common';
import { chainDigest, EMPTY_DIGEST, toolsDigest } from '../../../shared/digest.js';
import { expectedFailure, FailureType } from '../../../shared/errors.js';
import type { ChatMessage, ModelCallInput, ModelContextPage, ToolDefinition } from '../../../shared/types.js';
import type { RecentToolResults } from '../tool-calls/recent-results.js';

/** Where a worker reads a transcript it has not cached: the workflow, by query. */
export interface TranscriptSource {
  page(workflowId: string, runId: string, from: number, limit: number): Promise<ModelContextPage>;
}

export interface TranscriptCacheOptions {
  /** Conversation runs kept; the least recently used is dropped first. Default 1,000. */
  maxRuns?: number;
  /** Characters of message content kept across all runs. Default 256 million (about 0.5 GB of strings). */
  maxChars?: number;
  /** Messages asked for per query page on a miss. Default 500. */
  pageSize?: number;
}

/** A message this worker holds outside the cache, by its transcript position (a tool result it returned). */
type HeldMessage = (position: number) => ChatMessage | undefined;

interface Entry {
  messages: ChatMessage[];
  /** `digests[n]` names the first n messages. */
  digests: string[];
  chars: number;
  toolsDigest: string | undefined;
  tools: ToolDefinition[];
}

/**
 * The worker's copy of each conversation run's transcript, so a model call's input names a position instead of
 * carrying the whole transcript (which would make history grow with the square of the conversation). A miss, or a
 * cached copy whose digest does not match, is rebuilt from the workflow by query.
 */
export class TranscriptCache {
  private readonly entries = new Map<string, Entry>();
  private totalChars = 0;
  private readonly maxRuns: number;
  private readonly maxChars: number;
  private readonly pageSize: number;
  /** Counters for tests and benchmarks. */
  readonly stats = { hits: 0, misses: 0, pagesFetched: 0, heldToolResults: 0 };

  /**
   * @param toolResults the tool results this worker returned lately: a model call's prefix names a round's results
   *   (recorded once, as the tool calls' activity results), and those this worker ran are taken from here, not read.
   */
  constructor(
    private readonly source: TranscriptSource,
    options: TranscriptCacheOptions = {},
    private readonly toolResults?: RecentToolResults,
  ) {
    this.maxRuns = options.maxRuns ?? 1_000;
    this.maxChars = options.maxChars ?? 256_000_000;
    this.pageSize = options.pageSize ?? 500;
  }

  /** The full model input (prefix + new messages) and the turn's tools; the cache then holds the full input. */
  async resolve(input: ModelCallInput): Promise<{ messages: ChatMessage[]; tools: ToolDefinition[] }> {
    const key = `${input.workflowId}/${input.runId}`;
    let entry = this.entries.get(key);
    const { count, digest } = input.prefix;
    if (entry !== undefined && entry.digests[count] === digest) {
      this.stats.hits++;
      this.truncate(entry, count);
    } else if (entry !== undefined && entry.messages.length < count && (await this.extend(entry, input, key))) {
      // The prefix goes past what this worker holds: a round's tool results (recorded once, by their calls), messages
      // too large to send with the input (see Transcript.nextModelInput) or a round another worker ran. Those this
      // worker returned were taken from it; only the others were read.
      this.stats.misses++;
    } else {
      this.stats.misses++;
      entry = await this.fetch(input, key);
    }
    this.entries.delete(key);
    this.entries.set(key, entry);
    this.appendTo(entry, input.newMessages);

    if (input.toolsDigest === undefined) {
      entry.tools = [];
      entry.toolsDigest = undefined;
    } else if (entry.toolsDigest !== input.toolsDigest) {
      const page = await this.source.page(input.workflowId, input.runId, entry.messages.length, 0);
      this.stats.pagesFetched++;
      this.acceptTools(entry, page, input.toolsDigest);
    }
    this.evict();
    return { messages: entry.messages, tools: entry.tools };
  }

  /** Record the tools a call listed itself (the turn's first), so the turn's later calls find them by digest. */
  rememberTools(input: ModelCallInput, tools: ToolDefinition[]): void {
    const entry = this.entries.get(`${input.workflowId}/${input.runId}`);
    if (entry === undefined) return;
    entry.tools = tools;
    entry.toolsDigest = toolsDigest(tools);
  }

  /** Record the model's answer, so the next round's prefix (which includes it) is a hit. */
  remember(input: ModelCallInput, answer: ChatMessage): void {
    const entry = this.entries.get(`${input.workflowId}/${input.runId}`);
    if (entry !== undefined && entry.messages.length === input.prefix.count + input.newMessages.length) {
      this.appendTo(entry, [answer]);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.totalChars = 0;
  }

  /**
   * Read the messages between the cached ones and the named prefix. The chained digest at the prefix covers the cached
   * messages too, so a match proves the whole copy; on any failure the copy is put back as it was, for a full fetch.
   */
  private async extend(entry: Entry, input: ModelCallInput, key: string): Promise<boolean> {
    const cached = entry.messages.length;
    const held = this.heldToolResults(entry, key);
    // With the tool results this worker returned, then by query alone: a result the workflow changed before it
    // appended it (a person's edited arguments noted before it) fails the digest, and is read as it was appended.
    for (const attempt of held === undefined ? [undefined] : [held, undefined]) {
      try {
        await this.fill(entry, input, key, attempt);
        if (attempt !== undefined) this.forgetHeld(entry, cached, key);
        return true;
      } catch {
        this.truncate(entry, cached);
      }
    }
    return false;
  }

  /**
   * The results of the tool calls of the cached transcript's last message, by position: they follow it in the order
   * of its calls. Undefined when it asked for none, or this worker keeps no results.
   */
  private heldToolResults(entry: Entry, key: string): HeldMessage | undefined {
    const base = entry.messages.length;
    const last = entry.messages[base - 1];
    const results = this.toolResults;
    if (results === undefined || last?.role !== 'assistant' || !last.toolCalls?.length) return undefined;
    const calls = last.toolCalls;
    return (position) => {
      const call = calls[position - base];
      return call === undefined ? undefined : results.get(key, call.id);
    };
  }

  /** The cache holds the tool results it took from now on. */
  private forgetHeld(entry: Entry, from: number, key: string): void {
    const asked = entry.messages[from - 1];
    if (asked?.role !== 'assistant') return;
    for (const call of asked.toolCalls ?? []) this.toolResults?.taken(key, call.id);
  }

  private async fetch(input: ModelCallInput, key: string): Promise<Entry> {
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.totalChars -= old.chars;
      this.entries.delete(key);
    }
    const entry: Entry = { messages: [], digests: [EMPTY_DIGEST], chars: 0, toolsDigest: undefined, tools: [] };
    try {
      return await this.fill(entry, input, key);
    } catch (error) {
      // The entry was never stored: take its characters back out of the total.
      this.totalChars -= entry.chars;
      throw error;
    }
  }

  private async fill(entry: Entry, input: ModelCallInput, key: string, held?: HeldMessage): Promise<Entry> {
    const { count, digest } = input.prefix;
    while (entry.messages.length < count) {
      const from = entry.messages.length;
      const message = held?.(from);
      if (message !== undefined) {
        this.appendTo(entry, [message]);
        this.stats.heldToolResults++;
        continue;
      }
      // The messages up to the next one held here, in one page.
      let limit = 1;
      while (limit < Math.min(this.pageSize, count - from) && held?.(from + limit) === undefined) limit++;
      const page = await this.source.page(input.workflowId, input.runId, from, limit);
      this.stats.pagesFetched++;
      if (page.messages.length === 0) {
        throw unavailable(`the workflow has ${page.total} messages, fewer than the ${count} this call names`);
      }
      this.appendTo(entry, page.messages.slice(0, limit));
      if (input.toolsDigest !== undefined && page.toolsDigest === input.toolsDigest) {
        this.acceptTools(entry, page, input.toolsDigest);
      }
    }
    if (entry.digests[count] !== digest) {
      throw unavailable(`the digest of the first ${count} messages does not match (the transcript changed?)`);
    }
    this.entries.set(key, entry);
    return entry;
  }

  private acceptTools(entry: Entry, page: ModelContextPage, expected: string): void {
    const tools = page.tools ?? [];
    if (toolsDigest(tools) !== expected) {
      throw unavailable("the workflow's current tool list is not the one this call names");
    }
    entry.tools = tools;
    entry.toolsDigest = expected;
  }

  private appendTo(entry: Entry, messages: readonly ChatMessage[]): void {
    for (const message of messages) {
      entry.messages.push(message);
      entry.digests.push(chainDigest(entry.digests[entry.digests.length - 1] ?? EMPTY_DIGEST, message));
      const chars = sizeOf(message);
      entry.chars += chars;
      this.totalChars += chars;
    }
  }

  private truncate(entry: Entry, count: number): void {
    for (const message of entry.messages.splice(count)) {
      const chars = sizeOf(message);
      entry.chars -= chars;
      this.totalChars -= chars;
    }
    entry.digests.length = count + 1;
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.entries.size <= this.maxRuns && this.totalChars <= this.maxChars) break;
      if (this.entries.size === 1) break;
      this.entries.delete(key);
      this.totalChars -= entry.chars;
    }
  }
}

function sizeOf(message: ChatMessage): number {
  switch (message.role) {
    case 'assistant':
      return (
        (message.content?.length ?? 0) + (message.toolCalls ?? []).reduce((sum, call) => sum + call.arguments.length, 0)
      );
    default:
      return message.content.length;
  }
}

function unavailable(reason: string): ApplicationFailure {
  return expectedFailure({
    type: FailureType.TranscriptUnavailable,
    message: `The worker could not rebuild the transcript: ${reason}. Retrying.`,
  });
}
