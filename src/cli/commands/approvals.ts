import { Command, Option } from '@commander-js/extra-typings';
import type { ConversationPendingApproval } from '../../client/index.js';
import { jsonOption, printJson, withClient } from '../client-command.js';
import { shortArguments, shorten } from '../format.js';
import { printTable } from '../table.js';

export function approvalsCommand() {
  return new Command('approvals')
    .description(
      'List the tool calls waiting for a person to approve or deny them (durable-agent approve / deny): in one ' +
        'conversation, or in every conversation whose status is awaiting_approval.',
    )
    .addOption(new Option('-c, --conversation <id>', 'only this conversation (default: every conversation)'))
    .addOption(jsonOption())
    .action(async (options) => {
      const id = options.conversation;
      const pending = await withClient((client) =>
        id === undefined ? client.listPendingApprovals() : client.pendingApprovals(id),
      );
      if (options.json) return printJson(pending);
      if (pending.length === 0) {
        console.log(
          id === undefined ? 'No tool call waits for approval.' : `No tool call waits in conversation ${id}.`,
        );
        return;
      }
      printTable(['CONVERSATION', 'CALL ID', 'TOOL', 'ARGUMENTS', 'WHY', 'WAITING SINCE'], pending.map(row));
      const first = pending[0]!;
      console.log(
        `\nDecide with: durable-agent approve -c ${first.conversationId} ${first.callId}` +
          ` (or deny -c ${first.conversationId} ${first.callId} --reason '…')`,
      );
    });
}

function row(pending: ConversationPendingApproval): string[] {
  return [
    pending.conversationId,
    pending.callId,
    pending.tool,
    shortArguments(JSON.stringify(pending.arguments), 50),
    shorten(pending.reason, 80),
    pending.requestedAt.replace(/\.\d+Z$/, 'Z'),
  ];
}
