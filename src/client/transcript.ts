import type { ChatMessage } from '../shared/types.js';
import type { TranscriptPage } from '../workflows/definitions.js';

/** A page of a whole conversation's transcript, read across its runs. */
export interface ConversationTranscriptPage {
  /** Index (in the whole conversation) of the first message in `messages`. */
  from: number;
  messages: ChatMessage[];
  /** Messages in the whole conversation so far. */
  total: number;
  /** Where the next page starts; `undefined` on the last page. */
  nextFrom: number | undefined;
}

/** The one thing the reader needs from Temporal: the `transcript` query of one run. */
export type QueryRunTranscript = (runId: string, request: { from?: number; limit?: number }) => Promise<TranscriptPage>;

interface RunSpan {
  runId: string;
  /** First whole-conversation index this run holds for real (its leading system messages repeat earlier ones). */
  realStart: number;
  total: number;
  previousRunId: string | undefined;
}

/**
 * Largest page the workflow answers with (it caps `limit` at 1000).
 * @internal
 */
export const MAX_TRANSCRIPT_PAGE = 1000;

/**
 * Reads a conversation's transcript across its chain of runs (continue-as-new and reopened runs). Each run carries the
 * recent messages and answers for indexes from its `offset`; everything before is in earlier runs, reached through
 * `previousRunId`. A carried transcript starts with the conversation's system messages again, occupying the indexes
 * just below the first real message, so a run holds for real only from `offset + leading system messages` (or from 0 in
 * the first run).
 * @internal
 */
export class TranscriptChain {
  private readonly spans: RunSpan[] = [];

  constructor(
    private readonly latestRunId: string,
    private readonly query: QueryRunTranscript,
  ) {}

  /** Messages `[from, from + limit)` of the whole conversation. */
  async page(from = 0, limit = 200): Promise<ConversationTranscriptPage> {
    const size = Math.max(1, Math.min(limit, MAX_TRANSCRIPT_PAGE));
    const latest = await this.span(0);
    const total = latest.total;
    const start = Math.max(0, Math.min(from, total));
    const messages: ChatMessage[] = [];
    let cursor = start;
    while (cursor < total && messages.length < size) {
      const { span, end } = await this.spanHolding(cursor);
      const page = await this.query(span.runId, {
        from: cursor,
        limit: Math.min(size - messages.length, end - cursor),
      });
      if (page.from !== cursor || page.messages.length === 0) {
        throw new Error(
          `The transcript of run ${span.runId} answered from ${page.from} with ${page.messages.length} messages ` +
            `when asked from ${cursor}: the chain of runs is not what this client expects.`,
        );
      }
      const kept = page.messages.slice(0, end - cursor);
      messages.push(...kept);
      cursor += kept.length;
    }
    return { from: start, messages, total, nextFrom: cursor < total ? cursor : undefined };
  }

  /** Every message from `from` on, page by page. */
  async *messages(from = 0, pageSize = 200): AsyncGenerator<ChatMessage> {
    let next: number | undefined = from;
    while (next !== undefined) {
      const page = await this.page(next, pageSize);
      yield* page.messages;
      next = page.nextFrom;
    }
  }

  /** The newest run that holds `index`, and where the next newer run takes over. */
  private async spanHolding(index: number): Promise<{ span: RunSpan; end: number }> {
    let position = 0;
    let span = await this.span(0);
    let end = span.total;
    while (index < span.realStart) {
      if (span.previousRunId === undefined) {
        throw new Error(`Message ${index} is before run ${span.runId}, which names no earlier run.`);
      }
      end = span.realStart;
      position++;
      span = await this.span(position);
    }
    return { span, end };
  }

  /** The run `position` steps back from the latest (0 = latest), loaded once. */
  private async span(position: number): Promise<RunSpan> {
    while (this.spans.length <= position) {
      const newer = this.spans.at(-1);
      const runId = newer === undefined ? this.latestRunId : newer.previousRunId;
      if (runId === undefined) throw new Error('The chain of runs ended early.');
      this.spans.push(await this.describeRun(runId));
    }
    return this.spans[position] as RunSpan;
  }

  private async describeRun(runId: string): Promise<RunSpan> {
    // `from` below the run's offset is answered from the offset: the page shows the run's leading system messages.
    let page = await this.query(runId, { from: 0, limit: 20 });
    let leading = 0;
    for (;;) {
      const index = page.messages.findIndex((message) => message.role !== 'system');
      if (index >= 0 || page.messages.length === 0) {
        leading += index >= 0 ? index : 0;
        break;
      }
      leading += page.messages.length;
      page = await this.query(runId, { from: page.offset + leading, limit: 20 });
    }
    return {
      runId,
      realStart: page.offset === 0 ? 0 : page.offset + leading,
      total: page.total,
      previousRunId: page.previousRunId,
    };
  }
}
