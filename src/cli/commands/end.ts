import { Command, Option } from '@commander-js/extra-typings';
import { requiredConversationOption, jsonOption, printJson, withClient } from '../client-command.js';

export function endCommand() {
  return new Command('end')
    .description('End a conversation after its current turn; later messages to it are refused.')
    .addOption(requiredConversationOption())
    .addOption(new Option('--reason <text>', 'why it ended'))
    .addOption(jsonOption())
    .action(async (options) => {
      const id = options.conversation;
      await withClient((client) => client.end(id, options.reason !== undefined ? { reason: options.reason } : {}));
      if (options.json) return printJson({ conversationId: id, ended: true });
      console.log(`Conversation ${id} ends after its current turn.`);
    });
}
