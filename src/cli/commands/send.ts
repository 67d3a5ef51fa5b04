import { Command, Option } from '@commander-js/extra-typings';
import { conversationIdOrNew, conversationOption, jsonOption, printJson, withClient } from '../client-command.js';
import { messageArgument, messageFileOption, messageInputHelp, readMessage } from '../message-input.js';
import { addSettingsOptions, settingsFrom } from '../settings-options.js';

export function sendCommand() {
  const command = addSettingsOptions(
    new Command('send')
      .description(
        'Queue a message and return without waiting for the answer (creates the conversation when missing; reopens ' +
          'it when its run closed idle). Read the answer with `durable-agent history`.',
      )
      .addArgument(messageArgument())
      .addOption(messageFileOption())
      .addOption(conversationOption())
      .addOption(new Option('--message-id <id>', 'idempotency key: a message id is answered once (default: random)'))
      .addOption(jsonOption())
      .addHelpText('after', messageInputHelp),
  );
  return command.action(async (argument, options) => {
    const message = await readMessage(argument, options.file);
    const { id, generated } = conversationIdOrNew(options.conversation);
    const result = await withClient((client) =>
      client.send(id, message, {
        settings: settingsFrom(options),
        ...(options.messageId !== undefined ? { messageId: options.messageId } : {}),
      }),
    );
    if (options.json) return printJson({ ...result, generated });
    const how = result.created ? ' (new conversation)' : result.reopened ? ' (reopened)' : '';
    console.log(`Queued message ${result.messageId} in conversation ${id}${how}.`);
  });
}
