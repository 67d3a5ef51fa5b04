import { randomBytes } from 'node:crypto';
import { ConfigError, type Config } from '../../config/index.js';

/** The codec server `durable-agent dev` runs for its Web UI when encryption keys are set. */
export interface DevCodecServer {
  /** Where it listens, `http://127.0.0.1:port`. */
  url: string;
  /** What the Web UI is given: the URL with the token as its first path segment (the dev UI sends no headers). */
  endpoint: string;
  close(): Promise<void>;
}

/**
 * Start the codec server on DURABLE_AGENT_CODEC_PORT, allowing the dev Web UI's origin, when keys are set; undefined
 * when they are not. Its token is DURABLE_AGENT_CODEC_TOKEN, or a random one for this run: the dev UI is the only
 * caller, and it gets the token inside its codec endpoint.
 */
export async function startDevCodecServer(config: Config): Promise<DevCodecServer | undefined> {
  if (config.encryptionKeys.length === 0) return undefined;
  const { serveCodec } = await import('../../codec/codec-server.js');
  const token = config.codecToken ?? randomBytes(24).toString('base64url');
  const served = await serveCodec({
    keys: config.encryptionKeys,
    token,
    port: config.codecPort,
    corsOrigins: [`http://localhost:${config.uiPort}`, `http://127.0.0.1:${config.uiPort}`],
  }).catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    throw new ConfigError(
      `Port ${config.codecPort} on 127.0.0.1 is already in use, so the codec server for the Web UI cannot start: ` +
        'set DURABLE_AGENT_CODEC_PORT to a free port.',
      { cause: error },
    );
  });
  return { url: served.url, endpoint: `${served.url}/${encodeURIComponent(token)}`, close: () => served.close() };
}
