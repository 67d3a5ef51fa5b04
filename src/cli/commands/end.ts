import { Command, Option } from '@commander-js/extra-typings';
import { requiredConversationOption, jsonOption, printJson, withClient } from '../client-command.js';
import { lookUpConversation, runningTurn } from '../conversation-lookup.js';

export function endCommand() {
  return new Command('end')
    .description(
      'End a conversation after its current turn; later messages to it are refused. Ending one that has ended ' +
        'already changes nothing and says so; a missing one exits 3.',
    )
    .addOption(requiredConversationOption())
    .addOption(new Option('--reason <text>', 'why it ended'))
    .addOption(jsonOption())
    .action(async (options) => {
      const id = options.conversation;
      const outcome = await withClient(async (client) => {
        const found = await lookUpConversation(client, id);
        if (found.kind === 'ended') return { alreadyEnded: found.error.reason };
        await client.end(id, options.reason !== undefined ? { reason: options.reason } : {});
        return { runningTurn: runningTurn(found) };
      });
      if (options.json) {
        return printJson({ conversationId: id, ended: true, alreadyEnded: 'alreadyEnded' in outcome });
      }
      if ('alreadyEnded' in outcome) {
        const how = outcome.alreadyEnded === 'ended' ? '' : ` (its workflow run ${outcome.alreadyEnded})`;
        console.log(`Conversation ${id} had already ended${how}; nothing changed.`);
      } else if (outcome.runningTurn !== undefined) {
        console.log(`Conversation ${id} ends after its current turn (turn ${outcome.runningTurn}).`);
      } else console.log(`Conversation ${id} has ended.`);
    });
}
