import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, defaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, test } from 'vitest';
import { TextPublisher } from '../../src/worker/activities/model/text-publisher.js';
import { redactModelAnswer, redactOutcome, workerSecrets } from '../../src/worker/activities/calls/outbound.js';
import { parseMcpConfig } from '../../src/worker/mcp/config.js';
import { McpPool } from '../../src/worker/mcp/pool.js';
import { environmentSecrets, Redactor } from '../../src/shared/redaction.js';
import type { StreamBatch } from '../../src/workflows/stream-events.js';
import { RedactingLogger } from '../../src/worker/logger.js';
import { allText, canary, occurrences } from '../helpers/secrets.js';

/** Paths are not secrets, however long: absolute paths (under the temp directory) that must pass untouched. */
const keyPath = path.join(os.tmpdir(), 'keys', 'client.key');
const home = path.join(os.tmpdir(), 'someone-long-enough');

/** The rules of src/shared/redaction.ts, one by one; what-leaves-the-worker.test.ts runs them end to end. */

describe('which secrets the worker knows', () => {
  test('environment variables whose names and values look secret, but not paths, places, words or numbers', () => {
    const secrets = environmentSecrets({
      AUTH_MODE: 'disabled',
      SESSION_TIMEOUT_MS: '86400000',
      OPENAI_API_KEY: 'sk-proj-abcdefgh',
      GITHUB_TOKEN: 'ghp_0123456789',
      DB_PASSWORD: 'correct horse battery',
      SHORT_SECRET: 'tiny',
      FEATURE_KEY_ENABLED: 'true',
      TEMPORAL_TLS_CLIENT_KEY_PATH: keyPath,
      HOME: home,
    });
    expect(secrets.text('sk-proj-abcdefgh ghp_0123456789 correct horse battery tiny true disabled 86400000')).toBe(
      '${OPENAI_API_KEY} ${GITHUB_TOKEN} ${DB_PASSWORD} tiny true disabled 86400000',
    );
    expect(secrets.text(`${keyPath} ${home}`)).toBe(`${keyPath} ${home}`);
  });

  test("the model client's key, the MCP servers' secrets, and a token registered later", () => {
    const variable = canary('variable');
    const literalEnv = canary('literal');
    const [web, local] = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          web: { url: 'https://mcp.example/mcp', headers: { 'X-Team': 'team-header-value' } },
          local: { command: 'server', env: { SERVICE_TOKEN: literalEnv, MODE: 'production', KEY: '${DA_VAR}' } },
        },
      }),
      'mcp.json',
      { DA_VAR: variable },
    ).servers;
    const pool = new McpPool([web!, local!]);
    const secrets = workerSecrets({ secrets: new Redactor(), openai: { apiKey: 'model-key-12345' }, mcp: pool });
    // A local server's placeholder key is no secret: `test` must not vanish from every answer.
    expect(workerSecrets({ openai: { apiKey: 'test' }, mcp: {} }).text('a test answer')).toBe('a test answer');
    expect(secrets.text(`model-key-12345 team-header-value ${literalEnv} ${variable} production`)).toBe(
      '${OPENAI_API_KEY} [header X-Team] [env SERVICE_TOKEN] ${DA_VAR} production',
    );
    // A token the pool obtains while the worker runs (OAuth) is redacted from then on.
    const token = canary('oauth-token');
    expect(secrets.text(token)).toBe(token);
    pool.addSecret('web', token, '[oauth token]');
    expect(secrets.text(`token ${token}`)).toBe('token [oauth token]');
  });
});

describe('credentials recognised by their shape', () => {
  const secrets = new Redactor();

  test('authorization and cookie headers, bearer tokens, URL credentials, sk- keys', () => {
    expect(secrets.text('Authorization: Bearer abc.def-123')).toBe('Authorization: [redacted]');
    expect(secrets.text('{"authorization":"Basic dXNlcjpwYXNz","cookie":"sid=42"}')).toBe(
      '{"authorization":"[redacted]","cookie":"[redacted]"}',
    );
    expect(secrets.text('sent with bearer eyJhbGciOi.eyJzdWIi.sig to the API')).toBe(
      'sent with bearer [redacted] to the API',
    );
    expect(secrets.text('connect to postgres://admin:hunter22@db.internal:5432/app')).toBe(
      'connect to postgres://[redacted]@db.internal:5432/app',
    );
    expect(secrets.text('the key sk-proj-0123456789abcdefghijKLMN leaked')).toBe('the key [redacted] leaked');
  });

  test('in JSON inside a JSON string, and as a query parameter', () => {
    expect(secrets.text(String.raw`{"body":"{\"authorization\":\"opaque\",\"a\":1}"}`)).toBe(
      String.raw`{"body":"{\"authorization\":\"[redacted]\",\"a\":1}"}`,
    );
    expect(secrets.text('GET /feed?api-key=opaque123&page=2')).toBe('GET /feed?api-key=[redacted]&page=2');
  });

  test('a header named in a message is not a header value', () => {
    const message = 'mcp.json: server "search" key "headers.Authorization": environment variable TOKEN is not set.';
    expect(secrets.text(message)).toBe(message);
  });

  test('prose and labels are left alone, so redacting twice changes nothing', () => {
    const prose = 'Bearer tokens and Basic authentication: see the docs. Check OPENAI_API_KEY.';
    expect(secrets.text(prose)).toBe(prose);
    const labelled =
      '{"authorization":"[header Authorization]","x-api-key":"${API_KEY}"} https://[user]:[password]@host';
    expect(secrets.text(labelled)).toBe(labelled);
    // Help text names a credential by a placeholder; the sentence after it stays too.
    const help = 'callers send `Authorization: Bearer <token>` or as the first path segment.\nX-Api-Key: <key>';
    expect(secrets.text(help)).toBe(help);
  });

  test('a credential header in a structured value is replaced whole', () => {
    const headers = { Authorization: 'anything at all', accept: 'application/json', nested: [{ cookie: 'a=b' }] };
    expect(secrets.value(headers)).toEqual({
      Authorization: '[redacted]',
      accept: 'application/json',
      nested: [{ cookie: '[redacted]' }],
    });
    const clean = { a: ['b', { c: 1 }] };
    expect(secrets.value(clean)).toBe(clean);
  });
});

describe('what an activity sends', () => {
  const secret = canary('secret');
  const secrets = new Redactor([{ value: secret, label: '${SECRET}' }]);

  test('a failure: message, stack, details and causes, as Temporal encodes it', async () => {
    const cause = new Error(`socket said ${secret}`);
    const failure = ApplicationFailure.create({
      type: 'ModelAuthentication',
      message: `HTTP 401: Incorrect API key provided: ${secret}`,
      details: [{ body: `echo ${secret}` }],
      cause,
    });
    const thrown = await redactOutcome(secrets, () => Promise.reject(failure)).catch((error: unknown) => error);
    expect(thrown).toBe(failure);
    const encoded = defaultFailureConverter.errorToFailure(thrown, defaultPayloadConverter);
    expect(allText(encoded)).toContain('Incorrect API key provided: ${SECRET}');
    expect(occurrences(allText(encoded), secret)).toEqual([]);
  });

  test('a plain Error, whose stack keeps the message it was made with', async () => {
    const error = new TypeError(`fetch failed for ${secret}`);
    void error.stack;
    const thrown = (await redactOutcome(secrets, () => Promise.reject(error)).catch((e: unknown) => e)) as Error;
    expect(thrown.stack).toMatch(/^TypeError: fetch failed for \$\{SECRET\}/);
    expect(
      occurrences(allText(defaultFailureConverter.errorToFailure(thrown, defaultPayloadConverter)), secret),
    ).toEqual([]);
  });

  test('a result: every string, however deep', async () => {
    const result = await redactOutcome(secrets, async () => ({ outcome: 'ok', content: `the key is ${secret}` }));
    expect(result).toEqual({ outcome: 'ok', content: 'the key is ${SECRET}' });
  });

  test("a model answer: its text redacted, its tool calls' arguments kept as the model wrote them (the tool's input)", () => {
    const written = JSON.stringify({ path: `/srv/${secret}/notes.md`, header: 'Authorization: Bearer abcdefgh-123' });
    const answer = {
      message: {
        role: 'assistant' as const,
        content: `Reading ${secret}`,
        toolCalls: [{ id: 'call_1', name: `files__read_${secret}`, arguments: written }],
      },
      finishReason: 'tool_calls',
    };
    expect(redactModelAnswer(secrets, answer)).toEqual({
      message: {
        role: 'assistant',
        content: 'Reading ${SECRET}',
        toolCalls: [{ id: 'call_1', name: 'files__read_${SECRET}', arguments: written }],
      },
      finishReason: 'tool_calls',
    });
  });

  test('streamed text: a secret split across pieces never goes out, and the batches continue the answer', async () => {
    const batches: StreamBatch[] = [];
    const publisher = new TextPublisher({
      publish: async (_target, batch) => {
        batches.push(batch);
      },
      target: { workflowId: 'w', runId: 'r' },
      batch: { turn: 1, round: 1, attempt: 1 },
      intervalMs: 0,
      maxIntervalMs: 0,
      redactor: secrets,
    });
    const answer = `Your key: ${secret}. Authorization: Bearer abcdefgh-123\nDone.`;
    for (let index = 0; index < answer.length; index += 5) {
      publisher.add(answer.slice(index, index + 5));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await publisher.close();
    const streamed = batches.map((batch) => batch.text).join('');
    expect(batches.length).toBeGreaterThan(3);
    expect(occurrences(streamed, secret)).toEqual([]);
    expect(streamed).not.toContain('abcdefgh-123');
    expect(secrets.text(answer).startsWith(streamed)).toBe(true);
    expect(streamed).toContain('Your key: ${SECRET}. Authorization: [redacted]');
  });

  test('streamed prose that only mentions a header or a scheme is not held back', () => {
    expect(secrets.releasable('We use cookies here and')).toBe('We use cookies here and'.length);
    expect(secrets.releasable('Send the Authorization header first.')).toBe(
      'Send the Authorization header first.'.length,
    );
    const open = 'Send Authorization: Bearer abc';
    expect(secrets.releasable(open)).toBe('Send '.length);
    expect(secrets.releasable('see https://example.com/do')).toBe('see '.length);
    expect(secrets.releasable(`the key ${secret.slice(0, 10)}`)).toBe('the key '.length);
  });
});

test('the Runtime logger: message, metadata and errors', () => {
  const secret = canary('secret');
  const lines: Array<{ message: string; meta: unknown }> = [];
  const sink = {
    log: (_level: string, message: string, meta?: unknown) => lines.push({ message, meta }),
    trace: () => undefined,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  };
  const timestamp = Symbol('timestamp');
  const logger = new RedactingLogger(sink, new Redactor([{ value: secret, label: '${SECRET}' }]));
  logger.warn(`Activity failed with ${secret}`, {
    error: new Error(`because ${secret}`),
    headers: { authorization: 'Bearer whatever-1' },
    [timestamp]: 1n,
  });
  expect(occurrences(allText(lines), secret)).toEqual([]);
  expect(lines[0]!.message).toBe('Activity failed with ${SECRET}');
  expect((lines[0]!.meta as Record<symbol, unknown>)[timestamp]).toBe(1n);
  expect(allText(lines)).not.toContain('whatever-1');
});
