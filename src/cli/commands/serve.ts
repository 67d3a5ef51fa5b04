import { Command, Option } from '@commander-js/extra-typings';
import { parsePort } from '../arguments.js';
import { withClient } from '../client-command.js';
import { waitForSignal } from '../signals.js';

/** Default port of `durable-agent serve`. */
export const DEFAULT_SERVE_PORT = 8787;

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
        // The first line of stdout is the URL, for scripts that start the bridge and read where it listens.
        process.stdout.write(`${served.url}\n`);
        await waitForSignal();
        await served.close();
      });
    });
}
