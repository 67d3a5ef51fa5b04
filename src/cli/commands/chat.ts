import { Command, Option } from '@commander-js/extra-typings';
import { conversationIdOrNew, conversationOption, withClient } from '../client-command.js';
import { addSettingsOptions, settingsFrom } from '../settings-options.js';

export function chatCommand() {
  const command = addSettingsOptions(
    new Command('chat')
      .description(
        'Chat interactively: shows each tool call as it starts and finishes and a spinner while the model works, and ' +
          'turns sent from elsewhere as they stream. Ctrl-C interrupts the running turn; a second Ctrl-C (or Ctrl-C ' +
          'at the prompt, or Ctrl-D) leaves. Errors go to stderr; the exit code is that of the first message not ' +
          'answered (docs/cli.md), 0 when all were. A tool call that waits for approval is asked about inline ' +
          "([y/n/a]), and so is an MCP server's question (its fields one by one, or opened? [y/n/c] for a page).",
      )
      .addOption(conversationOption())
      .addOption(
        new Option(
          '--by <name>',
          "who approves or denies tool calls and answers servers' questions here (default: your login name)",
        ),
      ),
  );
  return command.action(async (options) => {
    const { id } = conversationIdOrNew(options.conversation);
    const { runChatSession } = await import('../chat/session.js');
    const exitCode = await withClient((client) =>
      runChatSession({
        client,
        conversationId: id,
        settings: settingsFrom(options),
        ...(options.by !== undefined ? { by: options.by } : {}),
        // Tool calls, rounds and the answer's text as they happen (docs/streaming.md). A conversation that does not
        // exist yet, or closed idle, is looked at twice a second, so the turn a message starts shows from its start.
        stream: { maxRetryDelayMs: 500 },
      }),
    );
    if (exitCode !== 0) process.exitCode = exitCode;
  });
}
