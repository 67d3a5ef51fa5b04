import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveCodec, type RunningCodecServer } from '../../src/codec/codec-server.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { formatEncryptionKeys } from '../../src/codec/keys.js';
import { canary } from '../helpers/secrets.js';
import { killAll, runCli, spawnTracked, cliPath } from '../cli/helpers.js';
import { newKey } from './keys.js';

/** Temporal's remote codec protocol as the Web UI and `temporal --codec-endpoint` speak it, over real HTTP. */

const keys = [newKey('current'), newKey('older')];
const token = canary('token');
let server: RunningCodecServer;

beforeAll(async () => {
  server = await serveCodec({ keys, token, port: 0, namespaces: ['default', 'team'] });
});

afterAll(async () => {
  await server?.close();
  await killAll();
});

const toJson = (payload: { metadata?: Record<string, Uint8Array> | null; data?: Uint8Array | null }) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});
const text = (base64: string) => Buffer.from(base64, 'base64').toString('utf8');

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}
interface CodecResponse {
  payloads: JsonPayload[];
  error?: string;
}

interface Call {
  path?: string;
  body?: unknown;
  headers?: Record<string, string>;
  base?: string;
}

async function post({ path = '/decode', body, headers = {}, base = server.url }: Call) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as CodecResponse };
}

const auth = { Authorization: `Bearer ${token}` };

describe('codec server', () => {
  it('/encode encrypts with the first key and /decode restores the payloads, JSON in base64 both ways', async () => {
    const secret = canary('message');
    const plain = toJson(defaultPayloadConverter.toPayload({ content: secret }));
    const encoded = await post({ path: '/encode', body: { payloads: [plain] }, headers: auth });
    expect(encoded.status).toBe(200);
    const encrypted = encoded.body.payloads[0]!;
    expect(text(encrypted.metadata.encoding!)).toBe('binary/encrypted');
    expect(text(encrypted.metadata['encryption-key-id']!)).toBe('current');
    expect(text(encrypted.data)).not.toContain(secret);
    const decoded = await post({ body: { payloads: [encrypted] }, headers: auth });
    expect(decoded.status).toBe(200);
    expect(decoded.body.payloads).toEqual([plain]);
  });

  it('decodes what the worker encrypted with an older key, and plain payloads as they are', async () => {
    const secret = canary('answer');
    const [older] = await new EncryptionCodec([keys[1]!]).encode([defaultPayloadConverter.toPayload(secret)]);
    const plain = toJson(defaultPayloadConverter.toPayload('plain'));
    const decoded = await post({ body: { payloads: [toJson(older!), plain] }, headers: auth });
    expect(decoded.body.payloads.map((payload) => text(payload.data))).toEqual([JSON.stringify(secret), '"plain"']);
  });

  it('the token is required: none or a wrong one is 401; as the first path segment it is accepted', async () => {
    const body = { payloads: [] };
    expect((await post({ body })).status).toBe(401);
    expect((await post({ body, headers: { Authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await post({ body, path: '/wrong/decode' })).status).toBe(401);
    const byPath = await post({ body, path: `/${token}/decode` });
    expect(byPath).toMatchObject({ status: 200, body: { payloads: [] } });
  });

  it('serves only its namespaces (X-Namespace)', async () => {
    const body = { payloads: [] };
    expect((await post({ body, headers: { ...auth, 'X-Namespace': 'team' } })).status).toBe(200);
    const other = await post({ body, headers: { ...auth, 'X-Namespace': 'someone-else' } });
    expect(other.status).toBe(403);
    expect(other.body.error).toMatch(/default, team/);
  });

  it('a payload whose key is unknown is 422 with the named error; a malformed body is 400', async () => {
    const [foreign] = await new EncryptionCodec([newKey('retired')]).encode([defaultPayloadConverter.toPayload(1)]);
    const unknown = await post({ body: { payloads: [toJson(foreign!)] }, headers: auth });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toMatch(/^EncryptionKeyNotFoundError: .*"retired"/);
    expect((await post({ body: '{"nope": 1}', headers: auth })).status).toBe(400);
    expect((await post({ body: 'not json', headers: auth })).status).toBe(400);
  });

  it('refuses a body over 16 MiB (413)', async () => {
    const huge = JSON.stringify({ payloads: [{ data: 'A'.repeat(17 * 1024 * 1024) }] });
    expect((await post({ body: huge, headers: auth })).status).toBe(413);
  });

  it('CORS: the Web UI origin may call it (preflight and answer); another origin gets no CORS grant', async () => {
    const preflight = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:8233',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace,authorization',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toMatch(/x-namespace/);
    expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
    const allowed = await post({ body: { payloads: [] }, headers: { ...auth, Origin: 'http://localhost:8233' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const other = await post({ body: { payloads: [] }, headers: { ...auth, Origin: 'http://evil.example' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('durable-agent codec-server', () => {
  it('serves with the keys and token from the environment and prints its URL first', async () => {
    const env = {
      ...process.env,
      DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys(keys),
      DURABLE_AGENT_CODEC_TOKEN: token,
    };
    const running = spawnTracked(
      process.execPath,
      [cliPath, 'codec-server', '--port', '0', '--cors', 'http://ui.test'],
      env,
    );
    try {
      let url: string | undefined;
      for (let attempt = 0; attempt < 200 && url === undefined; attempt++) {
        url = /^(http:\/\/\S+)\n/.exec(running.output())?.[1];
        if (url === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const [encrypted] = await new EncryptionCodec(keys).encode([defaultPayloadConverter.toPayload('hello')]);
      const decoded = await post({
        base: url,
        body: { payloads: [toJson(encrypted!)] },
        headers: { ...auth, Origin: 'http://ui.test' },
      });
      expect(decoded.status).toBe(200);
      expect(decoded.headers.get('access-control-allow-origin')).toBe('http://ui.test');
      expect(text(decoded.body.payloads[0]!.data)).toBe('"hello"');
    } finally {
      running.child.kill('SIGTERM');
      expect(await running.exited).toBe(0);
    }
  });

  it.each([
    ['no keys', { DURABLE_AGENT_CODEC_TOKEN: 'x' }, /needs DURABLE_AGENT_ENCRYPTION_KEYS/],
    [
      'no token',
      { DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys(keys) },
      // Help text, whole: a placeholder is no credential for the redaction of error output.
      'needs DURABLE_AGENT_CODEC_TOKEN: a long random token (e.g. `openssl rand -hex 32`) that callers send as ' +
        '`Authorization: Bearer <token>` or as the first path segment of the endpoint.\n',
    ],
    [
      'a 5-character token',
      { DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys(keys), DURABLE_AGENT_CODEC_TOKEN: 'abcde' },
      "The codec server's token (DURABLE_AGENT_CODEC_TOKEN) has 5 characters; it needs at least 16",
    ],
  ])('refuses to start with %s (exit code 2, the variable named)', async (_name, variables, message) => {
    const env = { ...process.env, DURABLE_AGENT_ENCRYPTION_KEYS: '', DURABLE_AGENT_CODEC_TOKEN: '', ...variables };
    const run = await runCli(['codec-server', '--port', '0'], env);
    expect(run.code).toBe(2);
    if (typeof message === 'string') expect(run.stderr).toContain(message);
    else expect(run.stderr).toMatch(message);
  });
});
