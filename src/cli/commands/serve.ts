import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Option } from '@commander-js/extra-typings';
import { parsePort, parsePositiveNumber } from '../arguments.js';
import { withClient } from '../client-command.js';
import { checkOrigin, readServeEnvironment } from '../serve-environment.js';
import { waitForSignal } from '../signals.js';
import { ExitCode } from '../../shared/exit-codes.js';
import { redactProcessOutput } from '../../node/redacted-output.js';
import { environmentSecrets } from '../../shared/redaction.js';

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
    .option(
      '--host <host>',
      'interface to listen on; any but a loopback one needs DURABLE_AGENT_SERVE_TOKEN or DURABLE_AGENT_SERVE_SECRET',
      '127.0.0.1',
    )
    .addOption(
      new Option('--allowed-host <name>', 'also answer to this Host name (repeat; DURABLE_AGENT_SERVE_ALLOWED_HOSTS)')
        .argParser(collect((name) => name))
        .default([] as string[]),
    )
    .addOption(
      new Option(
        '--allowed-origin <origin>',
        'allow pages on this origin (CORS and writes), e.g. http://localhost:5173 (repeat; ' +
          'DURABLE_AGENT_SERVE_ALLOWED_ORIGINS)',
      )
        .argParser(collect((origin) => checkOrigin(origin, '--allowed-origin')))
        .default([] as string[]),
    )
    .addOption(
      new Option('--cors <origin>', 'the same as --allowed-origin (older name)')
        .argParser(collect((origin) => checkOrigin(origin, '--cors')))
        .default([] as string[]),
    )
    .addOption(
      new Option('--max-body <bytes>', 'largest request body accepted')
        .default(1024 * 1024)
        .argParser(parsePositiveNumber),
    )
    .action(async (options) => {
      const environment = readServeEnvironment();
      // What the dependencies print themselves (the Temporal client, the HTTP server) is redacted like the worker's.
      const secrets = environmentSecrets();
      if (environment.token !== undefined) secrets.add(environment.token, '${DURABLE_AGENT_SERVE_TOKEN}');
      if (environment.secret !== undefined) secrets.add(environment.secret, '${DURABLE_AGENT_SERVE_SECRET}');
      redactProcessOutput(secrets);
      const { checkServeOptions, serveStreamingBridge } = await import('../../bridge/serve.js');
      const serveOptions = {
        port: options.port,
        host: options.host,
        ...(environment.token !== undefined ? { token: environment.token } : {}),
        ...(environment.secret !== undefined ? { secret: environment.secret } : {}),
        allowedHosts: [...environment.allowedHosts, ...options.allowedHost],
        allowedOrigins: [...environment.allowedOrigins, ...options.allowedOrigin, ...options.cors],
        maxBodyBytes: options.maxBody,
        // After the URL, one line per request on stdout (stderr stays for errors).
        log: (line: string) => void process.stdout.write(`${line}\n`),
      };
      // Before connecting: an unsafe configuration is refused whether or not Temporal is up.
      checkServeOptions(serveOptions);
      await withClient(async (agent) => {
        const served = await serveStreamingBridge({ agent, ...serveOptions });
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

/** A repeatable option: each value parsed, appended to the ones before. */
function collect(parse: (value: string) => string) {
  return (value: string, previous: string[]) => [...previous, parse(value)];
}
