import { Command, Option } from '@commander-js/extra-typings';
import { requiredConversationOption, jsonOption, printJson, withClient } from '../client-command.js';

export function interruptCommand() {
  return new Command('interrupt')
    .description(
      'Stop the running turn of a conversation (its tool calls are cancelled); the conversation stays usable.',
    )
    .addOption(requiredConversationOption())
    .addOption(new Option('--reason <text>', 'recorded in the transcript'))
    .addOption(jsonOption())
    .action(async (options) => {
      const id = options.conversation;
      await withClient((client) =>
        client.interrupt(id, options.reason !== undefined ? { reason: options.reason } : {}),
      );
      if (options.json) return printJson({ conversationId: id, interrupted: true });
      console.log(`Sent an interrupt to conversation ${id}.`);
    });
}
