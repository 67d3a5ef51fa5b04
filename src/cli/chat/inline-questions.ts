import type readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DurableAgentClient } from '../../client/index.js';
import { errorMessage } from '../../shared/errors.js';
import type { Spinner } from './spinner.js';

/**
 * Longest wait, after an answer given here was taken, for the stream to show it settled before the next question is
 * asked: the settlement's line (`✓ … approved by …`) then comes before the next question, and a stream that lags never
 * holds the questions back for long.
 */
const SETTLEMENT_WAIT_MS = 5_000;

export interface InlineQuestionsOptions {
  client: DurableAgentClient;
  conversationId: string;
  rl: readline.Interface;
  /** Where the questions are (the session's terminal). */
  output: NodeJS.WritableStream;
  spinner: Spinner;
  errors: NodeJS.WritableStream;
  /** Ask (the input is a terminal); otherwise only say how to answer from elsewhere. */
  interactive: boolean;
  /** Who answers here, for the audit trail. */
  by: string | undefined;
  /** Another kind of question holds the prompt: wait for `resume()`. */
  blocked?: () => boolean;
  /** No question is open any more: the session goes on (another kind of question, or its own prompt). */
  done: () => void;
}

/**
 * What the chat asks a person inline during a turn, one question at a time, in the order the conversation asked: a
 * queue of items (tool calls to approve, servers' questions), the one being asked, and the terminal's prompt. An item
 * settled elsewhere (another terminal, the CLI, a web page) is not asked again, or stops being asked. Subclasses say
 * how an item is asked and what a line answers.
 */
export abstract class InlineQuestions<Item, Asked extends { item: Item }, Options extends InlineQuestionsOptions> {
  protected readonly queue: Item[] = [];
  protected asking: Asked | undefined;
  private scheduled = false;
  /** An answer given here is being sent: the next question waits for it. */
  private sending = false;
  private closed = false;
  /** Items seen settled, for an answer whose settlement arrived before the call that sent it returned. */
  private readonly settledIds = new Set<string>();
  /** The settlement an answer sent here waits to see before the next question. */
  private awaited: { id: string; seen: () => void } | undefined;

  constructor(protected readonly options: Options) {}

  /** The item's id, as the conversation names it. */
  protected abstract idOf(item: Item): string;
  /** How to answer `item` from elsewhere, printed by a chat that does not ask (its input is not a terminal). */
  protected abstract elsewhere(item: Item): string;
  /** Ask about `item`: set `asking` and ask its first question. */
  protected abstract begin(item: Item): void;
  /** A line answers the open question about `asking.item`. */
  protected abstract reply(asking: Asked, line: string): void;

  /** The conversation asks: ask the person once the items before it are settled. */
  requested(item: Item): void {
    if (!this.options.interactive) return this.options.spinner.print(this.elsewhere(item));
    const id = this.idOf(item);
    if (this.isAsking(id) || this.queue.some((queued) => this.idOf(queued) === id)) return;
    this.queue.push(item);
    this.schedule();
  }

  /** The item was settled (here or elsewhere): it is no longer asked about. */
  settled(id: string): void {
    this.settledIds.add(id);
    if (this.awaited?.id === id) this.awaited.seen();
    const index = this.queue.findIndex((queued) => this.idOf(queued) === id);
    if (index >= 0) this.queue.splice(index, 1);
    if (!this.isAsking(id)) return;
    // The question's line gives way to the settlement's (which the turn's view prints next).
    this.asking = undefined;
    this.clearLine();
    this.schedule();
  }

  /** Output while a question is open goes above it; the question (and what was typed) is shown again after. */
  interject(write: () => void): void {
    if (this.asking === undefined) return write();
    this.clearLine();
    write();
    // The spinner would draw over the question.
    this.options.spinner.stop();
    this.options.rl.prompt(true);
  }

  /** The line answers the open question: true when it did (the session does nothing more with it). */
  answer(line: string): boolean {
    const asking = this.asking;
    if (asking === undefined) return false;
    const text = line.trim();
    if (text === '/exit' || text === '/quit') return false;
    this.reply(asking, line);
    return true;
  }

  /** True while a question is asked. */
  get open(): boolean {
    return this.asking !== undefined;
  }

  /** True while an item waits here, asked or not yet asked. */
  get waiting(): boolean {
    return this.asking !== undefined || this.queue.length > 0 || this.sending;
  }

  /** The other questions are done: ask what waits here. */
  resume(): void {
    this.schedule();
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.asking = undefined;
    this.awaited?.seen();
  }

  /** No item is left to ask about. */
  protected finished(): void {
    this.options.done();
  }

  protected ask(text: string): void {
    this.options.spinner.stop();
    this.options.rl.setPrompt(text);
    this.options.rl.prompt();
  }

  /**
   * Send the person's answer about `item`; on failure print `Could not <what>: <why>` (settled elsewhere first, or the
   * turn was interrupted: the stream shows what happened) and, when `askAgain(error)`, ask about the item again.
   */
  protected async send(
    item: Item,
    what: string,
    action: () => Promise<unknown>,
    askAgain: (error: unknown) => boolean = () => false,
  ): Promise<void> {
    this.asking = undefined;
    this.sending = true;
    try {
      await action();
      await this.settlement(this.idOf(item));
    } catch (error) {
      this.options.spinner.clear();
      this.options.errors.write(`Could not ${what}: ${errorMessage(error)}\n`);
      if (askAgain(error)) this.queue.unshift(item);
    } finally {
      this.sending = false;
    }
    this.next();
  }

  /** Resolves once the stream has shown `id` settled (its line printed), or after {@link SETTLEMENT_WAIT_MS}. */
  private async settlement(id: string): Promise<void> {
    if (this.settledIds.has(id) || this.closed) return;
    const timer = new AbortController();
    await Promise.race([
      new Promise<void>((resolve) => (this.awaited = { id, seen: resolve })),
      sleep(SETTLEMENT_WAIT_MS, undefined, { signal: timer.signal }).catch(() => undefined),
    ]);
    timer.abort();
    this.awaited = undefined;
  }

  private isAsking(id: string): boolean {
    return this.asking !== undefined && this.idOf(this.asking.item) === id;
  }

  /** Ask the next question after the events that came with this one: an item settled in the same batch is never asked. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.asking === undefined && !this.sending) this.next();
    });
  }

  private next(): void {
    if (this.closed || this.options.blocked?.()) return;
    const item = this.queue.shift();
    if (item === undefined) return this.finished();
    this.begin(item);
  }

  private clearLine(): void {
    this.options.output.write('\r\x1b[2K');
  }
}
