import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import { parsePositiveNumber } from '../arguments.js';
import { conversationIdOrNew, conversationOption, jsonOption, printJson, withClient } from '../client-command.js';
import { answered, describeStop, describeUnavailableServer } from '../format.js';
import { messageArgument, messageFileOption, messageInputHelp, readMessage } from '../message-input.js';
import { addSettingsOptions, settingsFrom } from '../settings-options.js';
import { ExitCode } from '../../shared/exit-codes.js';
import { errorMessage } from '../../shared/errors.js';
import type { JsonObject } from '../../shared/types.js';

export function askCommand() {
  const command = addSettingsOptions(
    new Command('ask')
      .description(
        'Send a message and wait for the answer (creates the conversation when missing). Prints the answer (with ' +
          '--output-schema, its parsed JSON); with --json the whole turn result, `output` included. Exits ' +
          `${ExitCode.TurnFailed} when the turn ends without an answer.`,
      )
      .addArgument(messageArgument())
      .addOption(messageFileOption())
      .addOption(conversationOption())
      .addOption(new Option('--message-id <id>', 'idempotency key: asking again with it returns the same answer'))
      .addOption(
        new Option('--timeout <seconds>', 'stop waiting after this long (default: no limit)').argParser(
          parsePositiveNumber,
        ),
      )
      .addOption(
        new Option(
          '--output-schema <schema>',
          'the answer must be JSON matching this JSON Schema (JSON text, or the path of a .json file)',
        ).argParser(parseOutputSchema),
      )
      .addOption(jsonOption())
      .addHelpText('after', messageInputHelp),
  );
  return command.action(async (argument, options) => {
    const message = await readMessage(argument, options.file);
    const { id, generated } = conversationIdOrNew(options.conversation);
    if (generated && !options.json) process.stderr.write(`Conversation ${id}\n`);
    const result = await withClient((client) =>
      client.ask(id, message, {
        settings: settingsFrom(options),
        ...(options.messageId !== undefined ? { messageId: options.messageId } : {}),
        ...(options.timeout !== undefined ? { waitTimeoutMs: Math.round(options.timeout * 1000) } : {}),
        ...(options.outputSchema !== undefined ? { output: { schema: options.outputSchema } } : {}),
      }),
    );
    if (options.json) printJson(result);
    else {
      // Before the answer, as chat shows it: an answer without a server's tools may be why it falls short. Not cut as
      // short as chat's live line: this line is all a plain `ask` says of it.
      for (const server of result.unavailableServers ?? [])
        process.stderr.write(`${describeUnavailableServer(server, 400)}\n`);
      if (result.output !== undefined) console.log(JSON.stringify(result.output, null, 2));
      else if (result.answer !== null) console.log(result.answer);
    }
    const stop = describeStop(result);
    if (stop !== undefined && !options.json) process.stderr.write(`${stop}\n`);
    if (!answered(result)) process.exitCode = ExitCode.TurnFailed;
  });
}

/** A JSON Schema given inline (`{...}`) or as the path of a file that holds one. */
function parseOutputSchema(value: string): JsonObject {
  const inline = value.trimStart().startsWith('{');
  let text = value;
  if (!inline) {
    try {
      text = readFileSync(value, 'utf8');
    } catch (error) {
      throw new InvalidArgumentError(`cannot read the schema file ${value} (${errorMessage(error)}).`);
    }
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(
      `${inline ? 'the schema' : value} is not JSON (${errorMessage(error)}); give a JSON Schema object such as ` +
        '\'{"type": "object", "properties": {"city": {"type": "string"}}}\'.',
    );
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new InvalidArgumentError('a JSON Schema must be a JSON object, e.g. \'{"type": "object"}\'.');
  }
  return schema as JsonObject;
}
