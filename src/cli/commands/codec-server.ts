import { Command, Option } from '@commander-js/extra-typings';
import { parsePort } from '../arguments.js';
import { waitForSignal } from '../signals.js';
import { ConfigError, loadConfig, type Config } from '../../config/index.js';

/** The keys and token a codec server needs, or a ConfigError naming the variable that is missing. */
export function codecServerSecrets(config: Config): { keys: Config['encryptionKeys']; token: string } {
  if (config.encryptionKeys.length === 0) {
    throw new ConfigError(
      'The codec server needs DURABLE_AGENT_ENCRYPTION_KEYS: the same keys as the worker (id:base64-of-32-bytes, ' +
        'comma-separated).',
    );
  }
  if (config.codecToken === undefined) {
    throw new ConfigError(
      'The codec server needs DURABLE_AGENT_CODEC_TOKEN: a long random token (e.g. `openssl rand -hex 32`) that ' +
        'callers send as `Authorization: Bearer <token>` or as the first path segment of the endpoint.',
    );
  }
  return { keys: config.encryptionKeys, token: config.codecToken };
}

/** `durable-agent codec-server`: Temporal's remote codec protocol over HTTP, for the Web UI and the temporal CLI. */
export function codecServerCommand() {
  return new Command('codec-server')
    .description(
      "Serve Temporal's remote codec protocol (POST /encode, /decode) with the encryption keys, so the Web UI and " +
        '`temporal --codec-endpoint` show decrypted payloads to whoever holds the token. See docs/security.md.',
    )
    .addOption(new Option('--port <port>', 'port to listen on; 0 picks a free one').default(8234).argParser(parsePort))
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option(
      '--cors <origin...>',
      "browser origins allowed to call it: the Web UI's (default http://localhost:8233 and http://127.0.0.1:8233)",
    )
    .option('--namespace <namespace...>', 'serve only these namespaces (the X-Namespace header); default any')
    .addHelpText(
      'after',
      `
Environment:
  DURABLE_AGENT_ENCRYPTION_KEYS  the keys (id:base64-of-32-bytes, comma-separated), as the worker has them
  DURABLE_AGENT_CODEC_TOKEN      the token every request must carry (Authorization: Bearer <token>, or /<token>/decode)`,
    )
    .action(async (options) => {
      const { keys, token } = codecServerSecrets(loadConfig());
      const { serveCodec } = await import('../../codec/codec-server.js');
      const served = await serveCodec({
        keys,
        token,
        port: options.port,
        host: options.host,
        ...(options.cors !== undefined ? { corsOrigins: options.cors } : {}),
        ...(options.namespace !== undefined ? { namespaces: options.namespace } : {}),
      });
      const signalled = waitForSignal();
      // The first line of stdout is the URL, for scripts that start the server and read where it listens.
      process.stdout.write(`${served.url}\n`);
      await signalled;
      await served.close();
    });
}
