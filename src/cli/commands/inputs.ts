import { Argument, Command, Option } from '@commander-js/extra-typings';
import type { InputAnswerOptions, InputRequest } from '../../client/index.js';
import { ExitCode } from '../../shared/exit-codes.js';
import { errorMessage } from '../../shared/errors.js';
import type { JsonObject } from '../../shared/types.js';
import { CliError, jsonOption, printJson, requiredConversationOption, withClient } from '../client-command.js';

/** `durable-agent inputs` and `durable-agent answer`: the questions MCP servers ask a person (elicitation). */

export function inputsCommand() {
  return new Command('inputs')
    .description(
      'List the questions MCP servers wait for a person to answer in a conversation (MCP elicitation), with the ' +
        'fields they ask for and the command that answers them.',
    )
    .addOption(requiredConversationOption())
    .addOption(jsonOption())
    .action(async (options) => {
      const id = options.conversation;
      const pending = await withClient((client) => client.pendingInputs(id));
      if (options.json) return printJson(pending);
      if (pending.length === 0) return console.log(`Conversation ${id} has no question waiting for an answer.`);
      for (const request of pending) console.log(describeRequest(id, request));
    });
}

export function answerCommand() {
  return new Command('answer')
    .description(
      "Answer an MCP server's question (see `durable-agent inputs`): --accept with the requested fields as a JSON " +
        'object (or alone, for a page to open), --decline, or --cancel. A question that is not pending exits 3, ' +
        'content that does not fit the requested fields exits 2; nothing changes then.',
    )
    .addOption(requiredConversationOption())
    .addArgument(new Argument('<request-id>', 'the question, as `durable-agent inputs` lists it'))
    .addOption(new Option('--accept [json]', 'accept, with the requested fields as a JSON object'))
    .addOption(new Option('--decline', 'decline to answer'))
    .addOption(new Option('--cancel', 'dismiss the question'))
    .addOption(new Option('--by <who>', 'who answers (kept in history)'))
    .addOption(jsonOption())
    .action(async (requestId, options) => {
      const id = options.conversation;
      const answer = answerOptions(options);
      const settled = await withClient(async (client) => {
        try {
          return await client.answerInput(id, requestId, answer);
        } catch (error) {
          throw await answerError(error);
        }
      });
      if (options.json) return printJson({ conversationId: id, ...settled });
      console.log(`Answered ${requestId} of conversation ${id}: ${settled.action}.`);
    });
}

function answerOptions(options: {
  accept?: string | true;
  decline?: true;
  cancel?: true;
  by?: string;
}): InputAnswerOptions {
  const chosen = [options.accept !== undefined, options.decline, options.cancel].filter(Boolean).length;
  if (chosen !== 1) {
    throw new CliError('Give exactly one of --accept [json], --decline, --cancel.', ExitCode.Usage);
  }
  const by = options.by !== undefined ? { by: options.by } : {};
  if (options.decline) return { action: 'decline', ...by };
  if (options.cancel) return { action: 'cancel', ...by };
  if (options.accept === true) return { action: 'accept', ...by };
  return { action: 'accept', content: parseContent(options.accept!), ...by };
}

function parseContent(text: string): JsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(
      `--accept: not valid JSON (${errorMessage(error)}); give an object such as '{"name": "Ada"}'.`,
      ExitCode.Usage,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(`--accept: expected a JSON object of the requested fields, got ${text}.`, ExitCode.Usage);
  }
  return value as JsonObject;
}

/** The client's named errors as exit codes: not pending (never, or no more) 3, an answer that does not fit 2. */
async function answerError(error: unknown): Promise<unknown> {
  const api = await import('../../client/index.js');
  const message = errorMessage(error);
  if (error instanceof api.InputRequestNotFoundError || error instanceof api.InputAlreadyAnsweredError) {
    return new CliError(message, ExitCode.NotFound, { cause: error });
  }
  if (error instanceof api.InvalidInputError) return new CliError(message, ExitCode.Usage, { cause: error });
  return error;
}

/** One question for people: who asks, what, the fields, until when, and how to answer. */
export function describeRequest(conversationId: string, request: InputRequest): string {
  const lines = [`${request.requestId}  ${request.tool} asks: ${request.message}`];
  if (request.mode === 'url') lines.push(`  open: ${request.url}`);
  const schema = request.requestedSchema ?? {};
  const properties = (schema.properties ?? {}) as Record<string, JsonObject>;
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const [name, field] of Object.entries(properties)) {
    const title = typeof field.title === 'string' ? ` ${field.title}` : '';
    const choices = Array.isArray(field.enum) ? ` one of ${field.enum.map((v) => JSON.stringify(v)).join(', ')}` : '';
    const need = required.includes(name) ? ', required' : '';
    const type = typeof field.type === 'string' ? field.type : 'any';
    lines.push(`  ${name} (${type}${need})${title}${choices}`);
  }
  const accept = request.mode === 'url' ? '--accept' : `--accept '{...}'`;
  lines.push(
    request.expiresAt !== undefined ? `  expires ${request.expiresAt}` : '  waits until answered',
    `  answer: durable-agent answer -c ${conversationId} ${request.requestId} ${accept} | --decline | --cancel`,
  );
  return lines.join('\n');
}
