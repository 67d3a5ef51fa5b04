import { InvalidInputError, type InputAnswerOptions, type InputRequest } from '../../client/index.js';
import type { JsonObject } from '../../shared/types.js';
import { fieldPrompt, inputFields, jsonAnswer, parseField, type InputField } from './input-fields.js';
import { InlineQuestions, type InlineQuestionsOptions } from './inline-questions.js';

/** A question being asked: which request, and (form mode) the fields asked so far and their values. */
interface Asking {
  item: InputRequest;
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
export class ChatInputs extends InlineQuestions<InputRequest, Asking, InlineQuestionsOptions> {
  /** A question was answered (here or elsewhere): it is no longer asked. */
  answered(requestId: string): void {
    this.settled(requestId);
  }

  protected idOf(request: InputRequest): string {
    return request.requestId;
  }

  protected elsewhere(request: InputRequest): string {
    const accept = request.mode === 'url' ? '--accept' : `--accept '{...}'`;
    return (
      `  ? answer with: durable-agent answer -c ${this.options.conversationId} ${request.requestId} ${accept}` +
      ` (or --decline, --cancel)`
    );
  }

  protected begin(request: InputRequest): void {
    const fields = inputFields(request);
    this.asking = { item: request, fields, field: 0, content: {} };
    if (request.mode === 'url') return this.ask(urlQuestion(request));
    if (fields.length === 0) return this.ask(`Answer y (accept), ${DECLINE} or ${CANCEL}: `);
    this.options.spinner.print(
      `  Answer each field, or give them all as one JSON line; ${DECLINE} or ${CANCEL} to refuse.`,
    );
    this.ask(fieldPrompt(fields[0]!));
  }

  protected reply(asking: Asking, line: string): void {
    if (asking.item.mode === 'url') this.answerUrl(asking, line.trim().toLowerCase());
    else this.answerField(asking, line);
  }

  private answerUrl(asking: Asking, choice: string): void {
    if (choice === 'y' || choice === 'yes') void this.sendAnswer(asking.item, { action: 'accept' });
    else if (choice === 'n' || choice === 'no') void this.sendAnswer(asking.item, { action: 'decline' });
    else if (choice === 'c' || choice === 'cancel') void this.sendAnswer(asking.item, { action: 'cancel' });
    else this.ask(`Please answer y (opened), n (decline) or c (cancel). ${urlQuestion(asking.item)}`);
  }

  private answerField(asking: Asking, line: string): void {
    const text = line.trim();
    if (text === DECLINE) return void this.sendAnswer(asking.item, { action: 'decline' });
    if (text === CANCEL) return void this.sendAnswer(asking.item, { action: 'cancel' });
    if (asking.fields.length === 0) {
      if (text.toLowerCase() === 'y') return void this.sendAnswer(asking.item, { action: 'accept', content: {} });
      return this.ask(`Answer y (accept), ${DECLINE} or ${CANCEL}: `);
    }
    const whole = asking.field === 0 ? jsonAnswer(text) : undefined;
    if (whole !== undefined) return void this.sendAnswer(asking.item, { action: 'accept', content: whole });
    const field = asking.fields[asking.field]!;
    const parsed = parseField(field, line);
    if ('error' in parsed) return this.ask(`${parsed.error}\n${fieldPrompt(field)}`);
    if ('value' in parsed) asking.content[field.name] = parsed.value;
    asking.field += 1;
    if (asking.field < asking.fields.length) return this.ask(fieldPrompt(asking.fields[asking.field]!));
    void this.sendAnswer(asking.item, { action: 'accept', content: asking.content });
  }

  private sendAnswer(request: InputRequest, answer: InputAnswerOptions): Promise<void> {
    const { client, conversationId, by } = this.options;
    return this.send(
      request,
      `answer ${request.requestId}`,
      () => client.answerInput(conversationId, request.requestId, { ...answer, ...(by !== undefined ? { by } : {}) }),
      // An answer that does not fit the fields is asked again; a question answered or expired is gone.
      (error) => error instanceof InvalidInputError,
    );
  }
}

/** The inline question about a page to open. */
export function urlQuestion(request: InputRequest): string {
  return `Opened ${request.url}? [y/n/c] `;
}
