import { Command, Option } from '@commander-js/extra-typings';
import { requiredConversationOption, jsonOption, printJson, withClient } from '../client-command.js';
import { lookUpConversation, runningTurn } from '../conversation-lookup.js';

export function interruptCommand() {
  return new Command('interrupt')
    .description(
      'Stop the running turn of a conversation (its tool calls are cancelled); the conversation stays usable. ' +
        'Without a running turn nothing changes; an ended conversation exits 4, a missing one 3.',
    )
    .addOption(requiredConversationOption())
    .addOption(new Option('--reason <text>', 'recorded in the transcript'))
    .addOption(jsonOption())
    .action(async (options) => {
      const id = options.conversation;
      const turn = await withClient(async (client) => {
        const found = await lookUpConversation(client, id);
        if (found.kind === 'ended') throw found.error;
        const running = runningTurn(found);
        if (running === undefined) return undefined;
        await client.interrupt(id, options.reason !== undefined ? { reason: options.reason } : {});
        return running;
      });
      if (options.json) return printJson({ conversationId: id, interrupted: turn !== undefined });
      console.log(
        turn === undefined
          ? `Conversation ${id} has no running turn; nothing to interrupt.`
          : `Interrupting turn ${turn} of conversation ${id}.`,
      );
    });
}
