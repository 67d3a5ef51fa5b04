import { randomUUID } from 'node:crypto';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import type { DurableAgentClient } from '../../client/index.js';
import { subscribe, type SubscribeOptions } from '../../client/stream.js';
import type { ConversationSettings, TurnResult } from '../../workflows/definitions.js';
import type { StreamEvent } from '../../workflows/stream-events.js';
import { errorMessage } from '../../shared/errors.js';
import { ExitCode } from '../../shared/exit-codes.js';
import { ChatQuestions } from './questions.js';
import { TurnView } from './turn-view.js';
import { toCliError } from '../client-command.js';
import { answered } from '../format.js';
import { loginName } from '../login-name.js';
import { Spinner } from './spinner.js';

export interface ChatSessionOptions {
  client: DurableAgentClient;
  conversationId: string;
  settings: ConversationSettings | undefined;
  /** How the session follows the conversation's event stream (docs/streaming.md); default the stream's own. */
  stream?: Pick<SubscribeOptions, 'waitMs' | 'maxRetryDelayMs'>;
  /** Default `process.stdin`. */
  input?: NodeJS.ReadStream;
  /** The prompt, the turns and the answers' live text; default `process.stdout`. */
  output?: NodeJS.WriteStream;
  /** Errors (a rejected message, an unreachable cluster); default `process.stderr`. */
  errors?: NodeJS.WritableStream;
  /** Who approves or denies tool calls and answers servers' questions here, for the history; default the login name. */
  by?: string;
}

const PROMPT = 'you> ';
/** How long, after `ask` returned, the stream may take to show the turn's end before the result is shown instead. */
const PROGRESS_DRAIN_MS = 3_000;
/** Longest pause before following the conversation's events again after the stream failed. */
const MAX_WATCH_RETRY_MS = 5_000;

/**
 * The interactive chat: a prompt; each message is asked (and waited for) while its turn streams in (the answer's text
 * as it is written, tool calls as they start and finish, a spinner while the model works). Turns started from
 * elsewhere (`send` in another terminal, the HTTP bridge) are shown too, as they stream. Ctrl-C interrupts the running
 * turn, a second Ctrl-C, or Ctrl-C / Ctrl-D at the prompt, leaves.
 *
 * Errors go to `errors`; the session goes on after a rejected message. Resolves, once everything the session started
 * has stopped, with the exit code: 0 when every message was answered (an interrupted turn counts), else the code of
 * the first that was not (docs/cli.md).
 */
export async function runChatSession(options: ChatSessionOptions): Promise<number> {
  const session = new ChatSession(options);
  return await session.run();
}

class ChatSession {
  private readonly client: DurableAgentClient;
  private readonly conversationId: string;
  private readonly input: NodeJS.ReadStream;
  private readonly output: NodeJS.WriteStream;
  private readonly errors: NodeJS.WritableStream;
  private readonly spinner: Spinner;
  private readonly rl: readline.Interface;
  /** Tool calls waiting for a person, asked about inline. */
  private readonly questions: ChatQuestions;
  /** Ends the event stream and any `ask` in flight. */
  private readonly stopping = new AbortController();

  /** Ids of the messages this session sent: their turns are its own, the others came from elsewhere. */
  private readonly mine = new Set<string>();
  /** Turns to leave out of the stream: the ones that had finished before the session started. */
  private shownAfter = 0;
  /** Turns being shown; every turn up to `finishedUpTo` has been shown to its end (turns run one after another). */
  private readonly views = new Map<number, TurnView>();
  private finishedUpTo = 0;
  /** Called when the stream has shown the end of a turn of this session. */
  private readonly finishedBy = new Map<string, () => void>();

  private running: { controller: AbortController; interrupting: boolean } | undefined;
  /** The greeting is shown and the stream followed: lines are answered from now on. */
  private ready = false;
  /** Answering the queued lines, one after another. */
  private turns: Promise<void> = Promise.resolve();
  private readonly pending: string[] = [];
  private inputClosed = false;
  private atPrompt = false;
  private leaving = false;
  private exitCode: number = ExitCode.Ok;
  private resolveDone!: () => void;
  private readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(private readonly options: ChatSessionOptions) {
    this.client = options.client;
    this.conversationId = options.conversationId;
    this.input = options.input ?? process.stdin;
    this.output = options.output ?? process.stdout;
    this.errors = options.errors ?? process.stderr;
    this.spinner = new Spinner(this.output);
    this.rl = readline.createInterface({
      input: this.input,
      output: this.output,
      terminal: this.input.isTTY === true,
      prompt: PROMPT,
    });
    this.questions = new ChatQuestions({
      client: this.client,
      conversationId: this.conversationId,
      rl: this.rl,
      output: this.output,
      spinner: this.spinner,
      errors: this.errors,
      // Piped input is messages, not answers: without a terminal the chat says how to answer from elsewhere.
      interactive: this.input.isTTY === true,
      by: options.by ?? loginName(),
      prompt: PROMPT,
      done: () => {
        if (!this.running) this.prompt();
      },
    });
  }

  async run(): Promise<number> {
    const onInterrupt = () => this.interrupt();
    this.rl.on('SIGINT', onInterrupt);
    // Without a terminal (input piped), Ctrl-C reaches the process as a signal instead.
    process.on('SIGINT', onInterrupt);
    this.rl.on('line', (line) => this.line(line));
    this.rl.on('close', () => {
      this.inputClosed = true;
      if (this.ready && !this.running && this.pending.length === 0) this.leave();
    });
    let watching: Promise<void> = Promise.resolve();
    try {
      this.say(await this.greeting());
      watching = this.watch();
      // Lines that came before (piped input comes at once) wait for the greeting and the stream.
      this.ready = true;
      if (this.pending.length > 0 || this.inputClosed) this.turns = this.answerQueued();
      else this.prompt();
      await this.done;
    } finally {
      process.off('SIGINT', onInterrupt);
      this.leave();
      // Everything the session started stops before the caller closes the connection under it.
      await Promise.all([watching, this.turns]);
      for (const view of this.views.values()) view.close();
    }
    return this.exitCode;
  }

  private line(line: string): void {
    if (this.leaving || this.questions.answer(line)) return;
    this.atPrompt = false;
    const text = line.trim();
    if (text === '/exit' || text === '/quit') return this.leave();
    if (text === '') {
      if (!this.running) this.prompt();
      return;
    }
    this.pending.push(text);
    if (this.running) this.say('(queued: sent when this turn ends)');
    else if (this.ready) this.turns = this.answerQueued();
  }

  /** Lines typed (or piped) while a turn runs wait their turn; the end of input leaves once they are answered. */
  private async answerQueued(): Promise<void> {
    while (!this.leaving) {
      const text = this.pending.shift();
      if (text === undefined) {
        if (this.inputClosed) this.leave();
        else this.prompt();
        return;
      }
      await this.ask(text);
    }
  }

  private async ask(text: string): Promise<void> {
    const controller = new AbortController();
    this.running = { controller, interrupting: false };
    const messageId = randomUUID();
    this.mine.add(messageId);
    const shownByStream = new Promise<void>((resolve) => this.finishedBy.set(messageId, resolve));
    const stop = () => controller.abort();
    this.stopping.signal.addEventListener('abort', stop, { once: true });
    this.spinner.update('thinking…');
    try {
      const result = await this.client.ask(this.conversationId, text, {
        messageId,
        settings: this.options.settings,
        signal: controller.signal,
      });
      // The stream usually shows the end of the turn first; if it has fallen behind, the result shows it.
      const drained = new AbortController();
      await Promise.race([
        shownByStream,
        sleep(PROGRESS_DRAIN_MS, undefined, { signal: drained.signal }).catch(() => undefined),
      ]);
      drained.abort();
      this.finish(result);
      if (!answered(result) && result.stopReason !== 'cancelled') this.fail(ExitCode.TurnFailed);
    } catch (error) {
      this.spinner.stop();
      if (!this.leaving) await this.report(error);
      if ((error as { name?: string }).name === 'ConversationEndedError') this.leave();
    } finally {
      this.stopping.signal.removeEventListener('abort', stop);
      this.finishedBy.delete(messageId);
      this.running = undefined;
    }
  }

  /**
   * Follow the conversation's turns for the whole session: this session's own, and those sent from elsewhere, shown
   * as they stream. A stream that fails is followed again after a pause.
   */
  private async watch(): Promise<void> {
    const { signal } = this.stopping;
    let delay = 500;
    while (!signal.aborted) {
      try {
        const events = subscribe(this.client.client, this.conversationId, { ...this.options.stream, signal });
        for await (const event of events) {
          delay = 500;
          await this.show(event);
        }
        // The conversation ended: nothing more will happen in it.
        return;
      } catch (error) {
        if (signal.aborted) return;
        this.spinner.clear();
        this.errors.write(`(the conversation's events are not coming through: ${errorMessage(error)}; trying again)\n`);
        await sleep(delay, undefined, { signal }).catch(() => undefined);
        delay = Math.min(delay * 2, MAX_WATCH_RETRY_MS);
      }
    }
  }

  private async show(event: StreamEvent): Promise<void> {
    if (event.turn <= Math.max(this.shownAfter, this.finishedUpTo)) return;
    if (event.type === 'turn_finished') {
      const { type: _type, offset: _offset, ...result } = event;
      this.finish({ conversationId: this.conversationId, ...result });
      const own = this.finishedBy.get(result.messageId);
      if (own) own();
      else if (!this.running) this.prompt();
      return;
    }
    if (!this.views.has(event.turn) && event.type === 'turn_started' && !this.mine.has(event.messageId)) {
      // A message sent from elsewhere: say so, on a line of its own, before its turn.
      this.breakPrompt();
      this.say(await this.fromElsewhere(event.messageId, event.turn));
    }
    this.questions.show(
      event,
      () => this.viewOf(event.turn).show(event),
      () => this.breakPrompt(),
    );
  }

  /** Show the end of a turn, from the stream or from `ask`, whichever comes first (the other changes nothing). */
  private finish(result: TurnResult): void {
    if (result.turn <= this.finishedUpTo) return;
    this.viewOf(result.turn).finish(result);
    this.views.delete(result.turn);
    this.finishedUpTo = result.turn;
  }

  /** The view of a turn, made when its first event (or its result) comes. */
  private viewOf(turn: number): TurnView {
    let view = this.views.get(turn);
    if (!view) {
      view = new TurnView(this.spinner, this.output);
      this.views.set(turn, view);
    }
    return view;
  }

  /** The line that introduces a turn sent from elsewhere, with its message when it can be read. */
  private async fromElsewhere(messageId: string, turn: number): Promise<string> {
    try {
      const status = await this.client.status(this.conversationId);
      const page = await this.client.transcript(this.conversationId, {
        from: Math.max(0, status.transcriptLength - 50),
        limit: 50,
      });
      const message = page.messages.find((entry) => entry.role === 'user' && entry.id === messageId);
      if (message) return `you (elsewhere)> ${message.content as string}`;
    } catch {
      // The message is in `durable-agent history`; the turn is shown anyway.
    }
    return `(turn ${turn}: a message sent from elsewhere)`;
  }

  private interrupt(): void {
    const { running } = this;
    if (running && !running.interrupting) {
      running.interrupting = true;
      this.say('Interrupting the turn… (Ctrl-C again to leave)');
      this.client.interrupt(this.conversationId, { reason: 'Ctrl-C in durable-agent chat' }).catch((error: unknown) => {
        this.spinner.clear();
        this.errors.write(`Could not interrupt: ${errorMessage(error)}\n`);
      });
      return;
    }
    this.output.write('\n');
    this.leave();
  }

  private leave(): void {
    if (this.leaving) return;
    this.leaving = true;
    this.questions.close();
    this.stopping.abort();
    this.spinner.stop();
    this.rl.close();
    this.resolveDone();
  }

  /** Print an error on `errors` and remember its exit code (the first failure's is the session's). */
  private async report(error: unknown): Promise<void> {
    const { connection } = this.client.client;
    const address = connection instanceof Connection ? connection.options.address : 'the configured address';
    const mapped = await toCliError(error, address);
    const exitCode = (mapped as { exitCode?: unknown }).exitCode;
    this.fail(typeof exitCode === 'number' ? exitCode : ExitCode.Failure);
    this.errors.write(`Error: ${errorMessage(mapped)}\n`);
  }

  private fail(exitCode: number): void {
    if (this.exitCode === ExitCode.Ok) this.exitCode = exitCode;
  }

  private async greeting(): Promise<string> {
    const how = `Ctrl-C interrupts a turn; Ctrl-C at the prompt (or Ctrl-D) leaves.`;
    const { client, conversationId } = this;
    try {
      const status = await client.status(conversationId);
      // A turn running now is shown from its start; the ones before it are history.
      const turnRunning = status.phase !== 'idle' && status.phase !== 'ended';
      this.shownAfter = turnRunning ? status.turns - 1 : status.turns;
      const state = status.open ? status.phase : `${status.phase}, closed`;
      return `Conversation ${conversationId} (${status.turns} turns, ${state}). ${how}`;
    } catch (error) {
      if ((error as { name?: string }).name !== 'ConversationNotFoundError') throw error;
      return `New conversation ${conversationId} (resume with: durable-agent chat --conversation ${conversationId}). ${how}`;
    }
  }

  private say(line: string): void {
    this.spinner.print(line);
  }

  private prompt(): void {
    if (this.leaving || this.inputClosed) return;
    this.atPrompt = true;
    this.rl.prompt(true);
  }

  /** End the prompt's line (keeping what was typed, which the next prompt shows again) before other output. */
  private breakPrompt(): void {
    if (!this.atPrompt) return;
    this.atPrompt = false;
    if (this.input.isTTY) {
      readline.clearLine(this.output, 0);
      readline.cursorTo(this.output, 0);
    } else {
      this.output.write('\n');
    }
  }
}
