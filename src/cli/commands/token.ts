import { Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import { CliError } from '../client-command.js';
import { readServeEnvironment } from '../serve-environment.js';
import { ExitCode } from '../../shared/exit-codes.js';

/** `durable-agent token`: mint a signed token for `durable-agent serve` with DURABLE_AGENT_SERVE_SECRET. */
export function tokenCommand() {
  return new Command('token')
    .description(
      'Print a short-lived token for `durable-agent serve` that opens the given conversations (read-only unless ' +
        '--write), signed with DURABLE_AGENT_SERVE_SECRET. See docs/streaming.md.',
    )
    .addOption(
      new Option('-c, --conversation <id>', 'a conversation the token opens (repeat for more)')
        .argParser((id: string, previous: string[] | undefined) => [...(previous ?? []), nonEmpty(id)])
        .makeOptionMandatory(),
    )
    .option('--write', 'also allow sending messages and deciding approvals (read+write)', false)
    .option('--ttl <duration>', 'lifetime: 90s, 15m, 1h, 1d (at most 24h)', '1h')
    .option('--tenant <id>', 'act for this tenant: open only its conversations, create them as its (docs/tenants.md)')
    .action(async (options) => {
      const { secret } = readServeEnvironment();
      if (secret === undefined) {
        throw new CliError(
          'DURABLE_AGENT_SERVE_SECRET is not set: set it to the secret `durable-agent serve` runs with (at least 32 ' +
            'bytes, e.g. from `openssl rand -base64 32`).',
          ExitCode.Usage,
        );
      }
      const { createServeToken } = await import('../../bridge/serve-tokens.js');
      const token = await createServeToken({
        secret,
        conversations: options.conversation,
        write: options.write,
        ttl: options.ttl,
        ...(options.tenant === undefined ? {} : { tenant: options.tenant }),
      });
      process.stdout.write(`${token}\n`);
    });
}

function nonEmpty(id: string): string {
  if (id.trim() === '') throw new InvalidArgumentError('expected a conversation id, not an empty string.');
  return id;
}
