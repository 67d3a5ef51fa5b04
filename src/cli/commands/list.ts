import { Command, Option } from '@commander-js/extra-typings';
import { parseWholeNumber } from '../arguments.js';
import { jsonOption, printJson, withClient } from '../client-command.js';
import { formatCost } from '../../shared/dollars.js';
import { printTable } from '../table.js';
import { CONVERSATION_PHASES } from '../../workflows/definitions.js';

export function listCommand() {
  return new Command('list')
    .description('List conversations, newest first (one line each: its latest run), filtered by state.')
    .addOption(new Option('--status <status>', 'only conversations in this state').choices(CONVERSATION_PHASES))
    .addOption(new Option('--tenant <id>', "only this tenant's conversations (docs/tenants.md)"))
    .addOption(new Option('--query <query>', "more visibility-query conditions, e.g. 'DurableAgentTurns > 3'"))
    .addOption(new Option('--limit <count>', 'at most this many').default(50).argParser(parseWholeNumber))
    .addOption(jsonOption())
    .action(async (options) => {
      const conversations = await withClient((client) =>
        client.list({
          ...(options.status ? { status: options.status } : {}),
          ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
          ...(options.query ? { query: options.query } : {}),
          limit: options.limit,
        }),
      );
      if (options.json) return printJson(conversations);
      if (conversations.length === 0) {
        console.log('No conversations.');
        return;
      }
      // The tenant's column only where conversations have tenants, so lists without any read as before.
      const tenants = conversations.some((entry) => entry.tenant !== undefined);
      const rows = conversations.map((entry) => [
        entry.conversationId,
        ...(tenants ? [entry.tenant ?? '-'] : []),
        entry.status,
        String(entry.turns),
        formatCost(entry.cost),
        entry.open ? 'open' : `closed (${entry.executionStatus.toLowerCase()})`,
        entry.startTime.toISOString(),
      ]);
      printTable(['CONVERSATION', ...(tenants ? ['TENANT'] : []), 'STATUS', 'TURNS', 'COST', 'RUN', 'STARTED'], rows);
    });
}
