import { Command, Option } from '@commander-js/extra-typings';
import type { ChatMessage } from '../../shared/types.js';
import { parseWholeNumber } from '../arguments.js';
import { requiredConversationOption, jsonOption, printJson, withClient } from '../client-command.js';
import { formatMessage } from '../format.js';

export function historyCommand() {
  return new Command('history')
    .description("Print a conversation's whole transcript, across all of its runs (continue-as-new, reopened).")
    .addOption(requiredConversationOption())
    .addOption(new Option('--from <index>', 'start at this message index').default(0).argParser(parseWholeNumber))
    .addOption(new Option('--limit <count>', 'print at most this many messages').argParser(parseWholeNumber))
    .addOption(jsonOption())
    .action(async (options) => {
      const id = options.conversation;
      const messages: ChatMessage[] = [];
      const cost = await withClient(async (client) => {
        for await (const message of client.messages(id, { from: options.from, pageSize: 500 })) {
          if (options.limit !== undefined && messages.length >= options.limit) break;
          messages.push(message);
        }
        // What the whole conversation cost so far (docs/cost.md): the JSON carries it beside the messages.
        return options.json ? (await client.status(id)).cost : undefined;
      });
      if (options.json)
        return printJson({ conversationId: id, from: options.from, messages, ...(cost ? { cost } : {}) });
      messages.forEach((message, index) => console.log(formatMessage(message, options.from + index)));
    });
}
