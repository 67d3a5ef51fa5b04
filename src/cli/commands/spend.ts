import { Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import { jsonOption, printJson, withClient } from '../client-command.js';
import { formatCost } from '../../shared/dollars.js';
import { printTable } from '../table.js';

/** `durable-agent spend`: what each tenant spent each UTC day, from the tenants' ledgers (docs/tenants.md). */
export function spendCommand() {
  return new Command('spend')
    .description('What each tenant spent each UTC day: dollars, tokens, turns and conversations (docs/tenants.md).')
    .addOption(new Option('--tenant <id>', "only this tenant's days"))
    .addOption(new Option('--since <date>', 'only days from this UTC day on, e.g. 2026-11-01').argParser(parseDay))
    .addOption(jsonOption())
    .action(async (options) => {
      const days = await withClient((client) =>
        client.spend({
          ...(options.tenant !== undefined ? { tenant: options.tenant } : {}),
          ...(options.since !== undefined ? { since: options.since } : {}),
        }),
      );
      if (options.json) return printJson(days);
      if (days.length === 0) {
        console.log('No spend recorded.');
        return;
      }
      const rows = days.map((day) => [
        day.day,
        day.tenant,
        formatCost({ usd: day.usd, ...(day.unpricedCalls > 0 ? { unpricedCalls: day.unpricedCalls } : {}) }),
        String(day.usage.totalTokens),
        String(day.calls),
        String(day.turns),
        String(day.conversations),
      ]);
      printTable(['DAY', 'TENANT', 'COST', 'TOKENS', 'CALLS', 'TURNS', 'CONVERSATIONS'], rows);
    });
}

function parseDay(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new InvalidArgumentError('expected a UTC day such as 2026-11-29.');
  }
  return value;
}
