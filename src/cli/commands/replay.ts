import { Command, Option } from '@commander-js/extra-typings';
import { ExitCode } from '../../shared/exit-codes.js';
import { parseWholeNumber } from '../arguments.js';
import { CliError, jsonOption, printJson, withClient } from '../client-command.js';
import type { ReplayOutcome } from '../../worker/replay.js';

/**
 * `durable-agent replay`: the check before a deploy. Replays the open conversations (or exported history files) on
 * this installation's workflow code, so a version that would strand them fails here instead of in production.
 */
export function replayCommand() {
  return new Command('replay')
    .description(
      "Replay conversations' histories on this version's workflow code: the check before deploying it in place " +
        '(docs/upgrading.md). With no files, replays the open conversations of the task queue.',
    )
    .argument('[files...]', 'history files exported with `temporal workflow show --output json` (no server needed)')
    .addOption(
      new Option('--query <query>', 'a visibility query choosing the histories instead of the open conversations'),
    )
    .addOption(new Option('--limit <count>', 'replay at most this many').default(200).argParser(parseWholeNumber))
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Exits 0 when every history replays, ${ExitCode.NotReplayable} when one does not (the version must not replace the running
worker in place: see docs/upgrading.md), 69 when Temporal cannot be reached. Encrypted histories replay with
DURABLE_AGENT_ENCRYPTION_KEYS, the keys the worker has.`,
    )
    .action(async (files, options) => {
      const { loadConfig } = await import('../../config/index.js');
      const replay = await import('../../worker/replay.js');
      const { encryptionKeys } = loadConfig();
      const outcomes: ReplayOutcome[] = [];
      const collect = async (histories: Parameters<typeof replay.replayHistories>[0]) => {
        for await (const outcome of replay.replayHistories(histories, { encryptionKeys })) {
          outcomes.push(outcome);
          if (!options.json) console.log(outcomeLine(outcome));
        }
      };
      if (files.length > 0) {
        if (options.query !== undefined) throw new CliError('Give history files or --query, not both.', ExitCode.Usage);
        await collect(await replay.historiesFromFiles(files.slice(0, options.limit)));
      } else {
        await withClient(async (client) => {
          const query = options.query ?? replay.openConversationsQuery(client.taskQueue);
          await collect(replay.historiesFromServer(client.client, query, options.limit));
        });
      }
      const failed = outcomes.filter((outcome) => outcome.error !== undefined).length;
      // "Replayed" counts the histories that passed: a failed one did not replay, so the two add up to the total.
      const replayed = outcomes.length - failed;
      if (options.json) printJson({ replayed, failed, histories: outcomes });
      else console.log(`${replayed} replayed, ${failed} failed`);
      if (failed > 0) {
        throw new CliError(
          `${failed} of ${outcomes.length} histories do not replay on this version: deploying it in place would fail ` +
            'those conversations. Patch the change (docs/upgrading.md) or deploy with Worker Versioning.',
          ExitCode.NotReplayable,
        );
      }
    });
}

function outcomeLine(outcome: ReplayOutcome): string {
  return outcome.error === undefined
    ? `ok    ${outcome.workflowId}`
    : `FAIL  ${outcome.workflowId}: ${outcome.error.name}: ${briefly(outcome.error.message)}`;
}

/** sdk-core's nondeterminism message (`[TMPRL1100] …`) says what differs; the text around it only repeats the kind. */
function briefly(message: string): string {
  return /\[TMPRL\d+\][^"]*/.exec(message)?.[0] ?? message.split('\n')[0]!;
}
