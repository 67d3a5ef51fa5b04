import { createHash, timingSafeEqual } from 'node:crypto';
import { listen } from '../node/http-server.js';
import { checkTokenLength } from '../shared/tokens.js';
import type { Payload } from '@temporalio/common';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { EncryptionCodec } from './encryption-codec.js';
import type { EncryptionKey } from './keys.js';

/**
 * Temporal's remote codec protocol, for the Web UI and `temporal --codec-endpoint`: POST `/encode` and `/decode` take
 * `{ "payloads": [...] }` (each payload's metadata values and data in base64, as protobuf JSON has them) and answer the
 * same shape, encrypted or decrypted with {@link EncryptionCodec}.
 *
 * Every request needs the token: `Authorization: Bearer <token>` (what `temporal --codec-auth` and a Web UI that
 * passes credentials send), or as the first path segment, `/<token>/decode`, for a Web UI whose codec endpoint is a
 * plain URL (the dev server's `--ui-codec-endpoint`).
 */
export interface CodecServerOptions {
  keys: readonly EncryptionKey[];
  /** Required, at least 16 characters (`MIN_TOKEN_CHARS`): requests without it get 401. */
  token: string;
  /** Browser origins allowed to call (CORS); default {@link DEFAULT_CODEC_CORS_ORIGINS}, the dev server's Web UI. */
  corsOrigins?: readonly string[];
  /** Namespaces served (the `X-Namespace` header); a request for another gets 403. Default any. */
  namespaces?: readonly string[];
}

/** The Web UI of `durable-agent dev` (and of `temporal server start-dev`) on its default port. */
export const DEFAULT_CODEC_CORS_ORIGINS = ['http://localhost:8233', 'http://127.0.0.1:8233'];

/** Default port of `durable-agent codec-server`. */
export const DEFAULT_CODEC_PORT = 8234;

/** The longest request body accepted: a few payloads of Temporal's 2 MiB limit, base64 grown. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export function createCodecApp(options: CodecServerOptions): Hono {
  checkTokenLength(options.token, "The codec server's token (DURABLE_AGENT_CODEC_TOKEN)");
  const codec = new EncryptionCodec(options.keys);
  const expected = digest(options.token);
  const app = new Hono();
  app.use(
    '*',
    cors({
      origin: [...(options.corsOrigins ?? DEFAULT_CODEC_CORS_ORIGINS)],
      allowMethods: ['POST', 'OPTIONS'],
      allowHeaders: ['Content-Type', 'X-Namespace', 'Authorization'],
      credentials: true,
      maxAge: 600,
    }),
  );
  app.use(
    '*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (context) => context.json({ error: 'Request body too large.' }, 413),
    }),
  );
  const handle = (operation: 'encode' | 'decode', tokenInPath: boolean) => async (context: Context) => {
    const given = tokenInPath ? context.req.param('token') : bearer(context.req.header('Authorization'));
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      return context.json({ error: 'Missing or wrong codec token (DURABLE_AGENT_CODEC_TOKEN).' }, 401);
    }
    const namespace = context.req.header('X-Namespace');
    if (options.namespaces !== undefined && (namespace === undefined || !options.namespaces.includes(namespace))) {
      return context.json({ error: `This codec server serves the namespaces ${options.namespaces.join(', ')}.` }, 403);
    }
    let payloads: Payload[];
    try {
      payloads = fromJson(await context.req.json());
    } catch (error) {
      return context.json({ error: `Expected { "payloads": [...] }: ${(error as Error).message}` }, 400);
    }
    try {
      const result = operation === 'encode' ? await codec.encode(payloads) : await codec.decode(payloads);
      return context.json({ payloads: result.map(toJson) });
    } catch (error) {
      // The codec's errors name the key id needed; they carry no payload content.
      return context.json({ error: `${(error as Error).name}: ${(error as Error).message}` }, 422);
    }
  };
  for (const operation of ['encode', 'decode'] as const) {
    app.post(`/${operation}`, handle(operation, false));
    app.post(`/:token/${operation}`, handle(operation, true));
  }
  return app;
}

export interface RunningCodecServer extends AsyncDisposable {
  /** `http://host:port`, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Serve the codec protocol on Node until `close()`. */
export async function serveCodec(
  options: CodecServerOptions & { port?: number; host?: string },
): Promise<RunningCodecServer> {
  const app = createCodecApp(options);
  const host = options.host ?? '127.0.0.1';
  const { server, port, url } = await listen(app.fetch, { port: options.port, host });
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      if ('closeAllConnections' in server) server.closeAllConnections();
    }));
  return {
    url,
    port,
    close,
    [Symbol.asyncDispose]: close,
  };
}

function bearer(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match ? match[1] : header.trim();
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

function fromJson(body: unknown): Payload[] {
  const payloads = (body as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(payloads)) throw new Error('no "payloads" array');
  return payloads.map((item: unknown, index) => {
    if (typeof item !== 'object' || item === null) throw new Error(`payload ${index} is not an object`);
    const { metadata = {}, data = '' } = item as JsonPayload;
    if (typeof metadata !== 'object' || typeof data !== 'string') throw new Error(`payload ${index} is malformed`);
    const decoded: Record<string, Uint8Array> = {};
    for (const [key, value] of Object.entries(metadata)) {
      if (typeof value !== 'string') throw new Error(`payload ${index}: metadata ${key} is not base64 text`);
      decoded[key] = Buffer.from(value, 'base64');
    }
    return { metadata: decoded, data: Buffer.from(data, 'base64') };
  });
}

function toJson(payload: Payload): JsonPayload {
  const metadata = Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  );
  return { metadata, data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64') };
}
