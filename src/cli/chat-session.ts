import { randomUUID } from 'node:crypto';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DurableAgentClient } from '../client/index.js';
import type { TurnEvent, TurnProgressSource } from '../client/turn-progress.js';
import type { ConversationSettings, TurnResult } from '../workflows/definitions.js';
import { describeStop, formatDuration, shortArguments, shorten } from './format.js';
import { Spinner } from './spinner.js';
import { errorMessage } from '../shared/errors.js';

export interface ChatSessionOptions {
  client: DurableAgentClient;
  conversationId: string;
  settings: ConversationSettings | undefined;
  /** Where the turn's rounds, text and tool calls are seen as they happen (the conversation's event stream). */
  progress: TurnProgressSource;
  /** Default `process.stdin`. */
  input?: NodeJS.ReadStream;
  /** Everything the session writes, the answer's live text included; default `process.stdout`. */
  output?: NodeJS.WriteStream;
}

/** How long the progress view may lag behind the answer before it is cut short. */
const PROGRESS_DRAIN_MS = 3_000;

/**
 * The interactive chat: a prompt; each message is asked (and waited for) while the turn streams in (the answer's text
 * as it is written, tool calls as they start and finish, a spinner while the model works); Ctrl-C interrupts the
 * running turn, a second Ctrl-C, or Ctrl-C / Ctrl-D at the prompt, leaves.
 */
export async function runChatSession(options: ChatSessionOptions): Promise<void> {
  const { client, conversationId, progress } = options;
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const spinner = new Spinner(output);
  const say = (line: string) => spinner.print(line);
  const rl = readline.createInterface({ input, output, terminal: input.isTTY === true, prompt: 'you> ' });

  let running: { controller: AbortController; interrupting: boolean } | undefined;
  let leaving = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));

  const leave = () => {
    if (leaving) return;
    leaving = true;
    running?.controller.abort();
    spinner.stop();
    rl.close();
    resolveDone();
  };

  const onInterrupt = () => {
    if (running && !running.interrupting) {
      running.interrupting = true;
      say('Interrupting the turn… (Ctrl-C again to leave)');
      client.interrupt(conversationId, { reason: 'Ctrl-C in durable-agent chat' }).catch((error: unknown) => {
        say(`Could not interrupt: ${errorMessage(error)}`);
      });
      return;
    }
    output.write('\n');
    leave();
  };
  rl.on('SIGINT', onInterrupt);
  // Without a terminal (input piped), Ctrl-C reaches the process as a signal instead.
  process.on('SIGINT', onInterrupt);

  const turn = async (text: string) => {
    const controller = new AbortController();
    running = { controller, interrupting: false };
    const messageId = randomUUID();
    try {
      const asked = client.ask(conversationId, text, {
        messageId,
        settings: options.settings,
        signal: controller.signal,
      });
      const events = progress.events(conversationId, messageId, { signal: controller.signal });
      const live = new LiveText(spinner, output);
      const shown = showProgress(events, spinner, live);
      const result = await asked;
      await Promise.race([shown, sleep(PROGRESS_DRAIN_MS)]);
      controller.abort();
      spinner.stop();
      // An answer already printed as it was written is not printed again.
      if (live.finish() && result.answer !== null) printResult({ ...result, answer: null }, say);
      else printResult(result, say);
    } catch (error) {
      spinner.stop();
      if (!leaving) say(`Error: ${errorMessage(error)}`);
      if ((error as { name?: string }).name === 'ConversationEndedError') leave();
    } finally {
      controller.abort();
      running = undefined;
    }
  };

  // Lines typed (or piped) while a turn runs wait their turn; the end of input leaves once they are answered.
  const pending: string[] = [];
  let inputClosed = false;
  const next = async (): Promise<void> => {
    if (running || leaving) return;
    const text = pending.shift();
    if (text === undefined) {
      if (inputClosed) leave();
      else rl.prompt();
      return;
    }
    await turn(text);
    await next();
  };

  rl.on('line', (line) => {
    if (leaving) return;
    const text = line.trim();
    if (text === '/exit' || text === '/quit') return leave();
    if (text === '') {
      if (!running) rl.prompt();
      return;
    }
    pending.push(text);
    if (running) say('(queued: sent when this turn ends)');
    void next();
  });
  rl.on('close', () => {
    inputClosed = true;
    if (!running && pending.length === 0) leave();
  });

  say(await greeting(client, conversationId));
  rl.prompt();
  await done;
  process.off('SIGINT', onInterrupt);
}

async function greeting(client: DurableAgentClient, conversationId: string): Promise<string> {
  const how = `Ctrl-C interrupts a turn; Ctrl-C at the prompt (or Ctrl-D) leaves.`;
  try {
    const status = await client.status(conversationId);
    const state = status.open ? status.phase : `${status.phase}, closed`;
    return `Conversation ${conversationId} (${status.turns} turns, ${state}). ${how}`;
  } catch (error) {
    if ((error as { name?: string }).name !== 'ConversationNotFoundError') throw error;
    return `New conversation ${conversationId} (resume with: durable-agent chat --conversation ${conversationId}). ${how}`;
  }
}

/** The answer's text printed as it streams in; a retried model call prints its round again. */
class LiveText {
  private started = false;
  private round: number | undefined;

  constructor(
    private readonly spinner: Spinner,
    private readonly output: NodeJS.WritableStream,
  ) {}

  /** True while a line of streamed text is open (nothing else has been written after it). */
  get streaming(): boolean {
    return this.started;
  }

  write(round: number, text: string, replace: boolean): void {
    if (!this.started) {
      this.spinner.stop();
      this.output.write('agent> ');
      this.started = true;
    } else if (replace || round !== this.round) {
      this.output.write(replace ? '\n(the model call was retried)\nagent> ' : '\nagent> ');
    }
    this.round = round;
    this.output.write(text);
  }

  /** End the streamed line before other output. */
  break(): void {
    if (this.started) this.output.write('\n');
    this.started = false;
    this.round = undefined;
  }

  /** End the streamed line; true when any text was streamed. */
  finish(): boolean {
    const streamed = this.started;
    this.break();
    return streamed;
  }
}

async function showProgress(events: AsyncIterable<TurnEvent>, spinner: Spinner, live: LiveText): Promise<void> {
  spinner.update('thinking…');
  for await (const event of events) {
    if (event.type === 'text') {
      live.write(event.round, event.text, event.replace);
      continue;
    }
    if (event.type === 'tool-started' || event.type === 'tool-finished') live.break();
    switch (event.type) {
      case 'model-call-started': {
        // A retry in the middle of the text says so in the text itself; the spinner would wipe the line.
        if (live.streaming) break;
        const retry = event.attempt > 1 ? ` · attempt ${event.attempt}` : '';
        spinner.update(`thinking… (round ${event.round}${retry})`);
        break;
      }
      case 'tool-started':
        spinner.print(`  → ${event.name} ${shortArguments(event.arguments)}`);
        spinner.update(`running ${event.name}…`);
        break;
      case 'tool-finished': {
        const took = ` ${formatDuration(event.durationMs)}`;
        if (event.outcome === 'ok') spinner.print(`  ✓ ${event.name}${took}`);
        else spinner.print(`  ✗ ${event.name}${took} ${event.outcome}: ${shorten(event.content, 100)}`);
        break;
      }
      case 'turn-started':
      case 'turn-finished':
        break;
    }
  }
}

function printResult(result: TurnResult, say: (line: string) => void): void {
  if (result.answer !== null) say(`agent> ${result.answer}`);
  const stop = describeStop(result);
  if (stop !== undefined) say(`(${stop})`);
}
