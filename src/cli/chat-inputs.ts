import type readline from 'node:readline';
import type { DurableAgentClient, InputAnswerOptions, InputRequest } from '../client/index.js';
import { errorMessage } from '../shared/errors.js';
import type { JsonObject } from '../shared/types.js';
import type { Spinner } from './spinner.js';
import { fieldPrompt, inputFields, jsonAnswer, parseField, type InputField } from './input-fields.js';

export interface ChatInputsOptions {
  client: DurableAgentClient;
  conversationId: string;
  rl: readline.Interface;
  /** Where the questions are (the session's terminal). */
  output: NodeJS.WritableStream;
  spinner: Spinner;
  errors: NodeJS.WritableStream;
  /** Ask (the input is a terminal); otherwise only say how to answer from elsewhere. */
  interactive: boolean;
  /** Who answers here, for the history. */
  by: string | undefined;
  /** Another question (an approval) holds the prompt: wait for `resume()`. */
  blocked: () => boolean;
  /** No question is open any more: the session goes on (another question, or its own prompt). */
  done: () => void;
}

/** A question being asked: which request, and (form mode) the fields asked so far and their values. */
interface Asking {
  request: InputRequest;
  fields: InputField[];
  field: number;
  content: JsonObject;
}

const DECLINE = '/decline';
const CANCEL = '/cancel';

/**
 * The chat's side of MCP servers' questions (elicitation, docs/mcp.md): each is asked inline, one at a time. Form
 * mode asks one field after the other, with its type (or takes the whole answer as a JSON line at the first field);
 * `/decline` and `/cancel` answer so at any field. URL mode asks `Opened <url>? [y/n/c]`. A question answered
 * elsewhere (`durable-agent answer`, another terminal, a web page) is not asked again, or stops being asked.
 */
export class ChatInputs {
  private readonly queue: InputRequest[] = [];
  private asking: Asking | undefined;
  private scheduled = false;
  /** An answer given here is being sent: the next question waits for it. */
  private sending = false;
  private closed = false;

  constructor(private readonly options: ChatInputsOptions) {}

  /** A server asks: ask the person once the questions before it are answered. */
  requested(request: InputRequest): void {
    const { options } = this;
    if (!options.interactive) {
      const accept = request.mode === 'url' ? '--accept' : `--accept '{...}'`;
      options.spinner.print(
        `  ? answer with: durable-agent answer -c ${options.conversationId} ${request.requestId} ${accept}` +
          ` (or --decline, --cancel)`,
      );
      return;
    }
    const id = request.requestId;
    if (this.asking?.request.requestId === id || this.queue.some((queued) => queued.requestId === id)) return;
    this.queue.push(request);
    this.schedule();
  }

  /** A question was answered (here or elsewhere): it is no longer asked. */
  answered(requestId: string): void {
    const index = this.queue.findIndex((queued) => queued.requestId === requestId);
    if (index >= 0) this.queue.splice(index, 1);
    if (this.asking?.request.requestId !== requestId) return;
    this.asking = undefined;
    this.clearLine();
    this.schedule();
  }

  /** The other questions are done: ask what waits here. */
  resume(): void {
    this.schedule();
  }

  /** True while a question waits here, asked or not yet asked. */
  get waiting(): boolean {
    return this.asking !== undefined || this.queue.length > 0 || this.sending;
  }

  /** True while a question is asked. */
  get open(): boolean {
    return this.asking !== undefined;
  }

  /** Output while a question is open goes above it; the question (and what was typed) is shown again after. */
  interject(write: () => void): void {
    if (this.asking === undefined) return write();
    this.clearLine();
    write();
    this.options.spinner.stop();
    this.options.rl.prompt(true);
  }

  /** The line answers the open question: true when it did (the session does nothing more with it). */
  answer(line: string): boolean {
    const asking = this.asking;
    if (asking === undefined) return false;
    const text = line.trim();
    if (text === '/exit' || text === '/quit') return false;
    if (asking.request.mode === 'url') this.answerUrl(asking, text.toLowerCase());
    else this.answerField(asking, line);
    return true;
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.asking = undefined;
  }

  private answerUrl(asking: Asking, choice: string): void {
    if (choice === 'y' || choice === 'yes') void this.send(asking.request, { action: 'accept' });
    else if (choice === 'n' || choice === 'no') void this.send(asking.request, { action: 'decline' });
    else if (choice === 'c' || choice === 'cancel') void this.send(asking.request, { action: 'cancel' });
    else this.ask(`Please answer y (opened), n (decline) or c (cancel). ${urlQuestion(asking.request)}`);
  }

  private answerField(asking: Asking, line: string): void {
    const text = line.trim();
    if (text === DECLINE) return void this.send(asking.request, { action: 'decline' });
    if (text === CANCEL) return void this.send(asking.request, { action: 'cancel' });
    if (asking.fields.length === 0) {
      if (text.toLowerCase() === 'y') return void this.send(asking.request, { action: 'accept', content: {} });
      return this.ask(`Answer y (accept), ${DECLINE} or ${CANCEL}: `);
    }
    const whole = asking.field === 0 ? jsonAnswer(text) : undefined;
    if (whole !== undefined) return void this.send(asking.request, { action: 'accept', content: whole });
    const field = asking.fields[asking.field]!;
    const parsed = parseField(field, line);
    if ('error' in parsed) return this.ask(`${parsed.error}\n${fieldPrompt(field)}`);
    if ('value' in parsed) asking.content[field.name] = parsed.value;
    asking.field += 1;
    if (asking.field < asking.fields.length) return this.ask(fieldPrompt(asking.fields[asking.field]!));
    void this.send(asking.request, { action: 'accept', content: asking.content });
  }

  /** Ask the next question after the events that came with this one (an answer in the same batch is never asked). */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.asking === undefined && !this.sending) this.next();
    });
  }

  private next(): void {
    if (this.closed || this.options.blocked()) return;
    const request = this.queue.shift();
    if (request === undefined) return this.options.done();
    const fields = inputFields(request);
    this.asking = { request, fields, field: 0, content: {} };
    if (request.mode === 'url') return this.ask(urlQuestion(request));
    if (fields.length === 0) return this.ask(`Answer y (accept), ${DECLINE} or ${CANCEL}: `);
    this.options.spinner.print(
      `  Answer each field, or give them all as one JSON line; ${DECLINE} or ${CANCEL} to refuse.`,
    );
    this.ask(fieldPrompt(fields[0]!));
  }

  private clearLine(): void {
    this.options.output.write('\r\x1b[2K');
  }

  private ask(text: string): void {
    this.options.spinner.stop();
    this.options.rl.setPrompt(text);
    this.options.rl.prompt();
  }

  private async send(request: InputRequest, answer: InputAnswerOptions): Promise<void> {
    this.asking = undefined;
    this.sending = true;
    const { client, conversationId, by } = this.options;
    try {
      await client.answerInput(conversationId, request.requestId, { ...answer, ...(by !== undefined ? { by } : {}) });
    } catch (error) {
      this.options.spinner.clear();
      this.options.errors.write(`Could not answer ${request.requestId}: ${errorMessage(error)}\n`);
      // An answer that does not fit the fields is asked again; a question answered or expired is gone.
      const { InvalidInputError } = await import('../client/index.js');
      if (error instanceof InvalidInputError) this.queue.unshift(request);
    } finally {
      this.sending = false;
    }
    this.next();
  }
}

/** The inline question about a page to open. */
export function urlQuestion(request: InputRequest): string {
  return `Opened ${request.url}? [y/n/c] `;
}
