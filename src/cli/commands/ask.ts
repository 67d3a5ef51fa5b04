import { Command, Option } from '@commander-js/extra-typings';
import { parsePositiveNumber } from '../arguments.js';
import { conversationIdOrNew, conversationOption, jsonOption, printJson, withClient } from '../client-command.js';
import { answered, describeStop, describeUnavailableServer } from '../format.js';
import { messageArgument, messageFileOption, messageInputHelp, readMessage } from '../message-input.js';
import { addSettingsOptions, settingsFrom } from '../settings-options.js';
import { ExitCode } from '../../shared/exit-codes.js';

export function askCommand() {
  const command = addSettingsOptions(
    new Command('ask')
      .description(
        'Send a message and wait for the answer (creates the conversation when missing). Prints the answer; with ' +
          `--json the whole turn result. Exits ${ExitCode.TurnFailed} when the turn ends without an answer.`,
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
      }),
    );
    if (options.json) printJson(result);
    else {
      // Before the answer, as chat shows it: an answer without a server's tools may be why it falls short. Not cut as
      // short as chat's live line: this line is all a plain `ask` says of it.
      for (const server of result.unavailableServers ?? [])
        process.stderr.write(`${describeUnavailableServer(server, 400)}\n`);
      if (result.answer !== null) console.log(result.answer);
    }
    const stop = describeStop(result);
    if (stop !== undefined && !options.json) process.stderr.write(`${stop}\n`);
    if (!answered(result)) process.exitCode = ExitCode.TurnFailed;
  });
}
