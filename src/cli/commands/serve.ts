import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Option } from '@commander-js/extra-typings';
import { parsePort } from '../arguments.js';
import { withClient } from '../client-command.js';
import { waitForSignal } from '../signals.js';
import { ExitCode } from '../../shared/exit-codes.js';

/** Default port of `durable-agent serve`. */
export const DEFAULT_SERVE_PORT = 8787;
/**
 * How long `serve` waits, after SIGINT or SIGTERM, for its subscriptions to stop before it closes the connection: they
 * stop within half a second even when Temporal is unreachable (cancelled calls stop retrying), so this is a bound.
 */
const SHUTDOWN_WAIT_MS = 1_200;

/** `durable-agent serve`: the HTTP bridge for web front ends (server-sent events and a POST), until interrupted. */
export function serveCommand() {
  return new Command('serve')
    .description(
      'Serve conversations over HTTP for web front ends: GET /conversations/:id/events streams the events ' +
        '(server-sent events), POST /conversations/:id/messages sends a message. See docs/streaming.md.',
    )
    .addOption(
      new Option('--port <port>', 'port to listen on; 0 picks a free one')
        .default(DEFAULT_SERVE_PORT)
        .argParser(parsePort),
    )
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--cors <origin>', 'allow browsers on this origin (e.g. http://localhost:5173, or * for any)')
    .action(async (options) => {
      const { serveStreamingBridge } = await import('../../streaming/serve.js');
      await withClient(async (agent) => {
        const served = await serveStreamingBridge({
          agent,
          port: options.port,
          host: options.host,
          ...(options.cors !== undefined ? { corsOrigin: options.cors } : {}),
        });
        // Listening for the signal before the URL is out: a script that read it may stop the bridge at once.
        const signalled = waitForSignal();
        // The first line of stdout is the URL, for scripts that start the bridge and read where it listens.
        process.stdout.write(`${served.url}\n`);
        await signalled;
        // A second signal does not wait.
        const now = () => process.exit(ExitCode.Failure);
        process.once('SIGINT', now).once('SIGTERM', now);
        const waited = new AbortController();
        await Promise.race([
          served.close(),
          sleep(SHUTDOWN_WAIT_MS, undefined, { signal: waited.signal }).catch(() => undefined),
        ]);
        waited.abort();
      });
    });
}
