import { Argument, Command } from '@commander-js/extra-typings';
import { conversationIdOrNew, conversationOption, jsonOption, printJson, withClient } from '../client-command.js';
import { addSettingsOptions, settingsFrom } from '../settings-options.js';

export function startCommand() {
  const command = addSettingsOptions(
    new Command('start')
      .description(
        'Create a conversation (or reopen one whose run closed idle), optionally with a first message. Idempotent.',
      )
      .addArgument(new Argument('[message]', 'a first message to queue'))
      .addOption(conversationOption())
      .addOption(jsonOption()),
  );
  return command.action(async (message, options) => {
    const { id, generated } = conversationIdOrNew(options.conversation);
    const result = await withClient((client) =>
      client.start(id, { settings: settingsFrom(options), ...(message !== undefined ? { message } : {}) }),
    );
    if (options.json) return printJson({ ...result, generated });
    const how = result.created ? 'created' : result.reopened ? 'reopened' : 'already running';
    console.log(`Conversation ${id} (${how}).`);
    if (result.messageId) console.log(`Queued message ${result.messageId}.`);
  });
}
