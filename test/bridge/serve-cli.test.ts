import { setTimeout as sleep } from 'node:timers/promises';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { jwtVerify } from 'jose';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { cliPath, killAll, runCli, spawnTracked, type RunningProcess } from '../cli/helpers.js';
import { httpRequest } from './http-request.js';

/**
 * Issue 18 as a user runs it: `durable-agent serve` and `durable-agent token` as processes (the built CLI) on a Temporal
 * dev server: the refused public bind, tokens minted on the command line, the request log, SIGTERM with a stream open.
 */

const SECRET = 'a-secret-of-at-least-32-bytes-for-hs256!';
const OPERATOR = 'operator-token-0123456789abcdef';

let env: TestWorkflowEnvironment | undefined;
let agent: TestAgent | undefined;

beforeAll(async () => {
  env = await createLocalEnvironment();
  agent = await startTestAgent({ env, script: [{ content: 'Hello through a token.' }] });
});

afterEach(killAll);

afterAll(async () => {
  await killAll();
  await agent?.close();
  await env?.teardown();
});

/** The environment of a CLI run: this file's Temporal and task queue, no serve settings but `extra`. */
function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DURABLE_AGENT_')));
  return { ...base, TEMPORAL_ADDRESS: env!.address, DURABLE_AGENT_TASK_QUEUE: agent!.taskQueue, ...extra };
}

/** `durable-agent serve` as a process, and its URL (the first line of its stdout). */
async function serve(args: string[], extra: Record<string, string>): Promise<{ process: RunningProcess; url: string }> {
  const bridge = spawnTracked(process.execPath, [cliPath, 'serve', '--port', '0', ...args], cliEnv(extra));
  await expect.poll(() => bridge.output(), { timeout: 30_000 }).toMatch(/\n/);
  const url = bridge.output().split('\n')[0]!.replace('0.0.0.0', '127.0.0.1');
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  return { process: bridge, url };
}

it('serve: a non-loopback address without a token is refused before connecting, with exit 2 and what to set', async () => {
  const run = await runCli(['serve', '--host', '0.0.0.0', '--port', '0'], cliEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1' }));
  expect(run.code).toBe(2);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0 without authentication/);
  expect(run.stderr).toMatch(/DURABLE_AGENT_SERVE_TOKEN/);
});

it('serve: a non-loopback address with a token listens, and refuses requests without the token', async () => {
  const { url } = await serve(['--host', '0.0.0.0'], { DURABLE_AGENT_SERVE_TOKEN: OPERATOR });
  expect((await httpRequest(`${url}/conversations/x/events`)).status).toBe(401);
  const authorized = await httpRequest(`${url}/conversations/x/events`, {
    headers: { authorization: `Bearer ${OPERATOR}` },
  });
  expect(authorized.status).toBe(200);
});

it('token: prints an HS256 token for the conversations and scope asked; without a secret, exit 2', async () => {
  const run = await runCli(
    ['token', '-c', 'a', '-c', 'b', '--write', '--ttl', '15m'],
    cliEnv({ DURABLE_AGENT_SERVE_SECRET: SECRET }),
  );
  expect(run).toMatchObject({ code: 0, stderr: '' });
  const { payload, protectedHeader } = await jwtVerify(run.stdout.trim(), new TextEncoder().encode(SECRET));
  expect(protectedHeader.alg).toBe('HS256');
  expect(payload).toMatchObject({ conversations: ['a', 'b'], scope: 'read+write' });
  expect(payload.exp! - payload.iat!).toBe(15 * 60);

  const readOnly = await runCli(['token', '-c', 'a'], cliEnv({ DURABLE_AGENT_SERVE_SECRET: SECRET }));
  expect((await jwtVerify(readOnly.stdout.trim(), new TextEncoder().encode(SECRET))).payload.scope).toBe('read');

  const noSecret = await runCli(['token', '-c', 'a'], cliEnv());
  expect(noSecret.code).toBe(2);
  expect(noSecret.stderr).toMatch(/DURABLE_AGENT_SERVE_SECRET is not set/);
  const tooLong = await runCli(['token', '-c', 'a', '--ttl', '2d'], cliEnv({ DURABLE_AGENT_SERVE_SECRET: SECRET }));
  expect(tooLong.code).toBe(2);
  expect(tooLong.stderr).toMatch(/at most 24h/);
});

it('serve: a CLI token posts and streams; one log line per request, no token in the output; SIGTERM with a stream open exits 0', async () => {
  const settings = { DURABLE_AGENT_SERVE_TOKEN: OPERATOR, DURABLE_AGENT_SERVE_SECRET: SECRET };
  const { process: bridge, url } = await serve([], settings);
  const minted = await runCli(['token', '-c', 'cli-1', '--write'], cliEnv(settings));
  const token = minted.stdout.trim();

  const sent = await httpRequest(`${url}/conversations/cli-1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ content: 'hi' }),
  });
  expect(sent.status).toBe(202);
  const read = await httpRequest(`${url}/conversations/cli-1/events?access_token=${token}`, {
    until: (text) => text.includes('event: turn_finished'),
  });
  expect(read.body).toContain('Hello through a token.');

  // A browser keeps the stream open; the bridge must not wait for it.
  const controller = new AbortController();
  const open = fetch(`${url}/conversations/cli-1/events?access_token=${token}`, { signal: controller.signal });
  expect((await open).status).toBe(200);
  await expect.poll(() => bridge.output().split('\n').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(5);
  bridge.child.kill('SIGTERM');
  // A bound that only keeps a bridge that never stops from hanging the test (the issue asks for 2 s).
  const code = await Promise.race([bridge.exited, sleep(10_000).then(() => 'still running')]);
  controller.abort();
  expect(code).toBe(0);

  const lines = bridge.output().trim().split('\n');
  expect(lines.slice(1, 4)).toEqual([
    expect.stringMatching(/^\S+Z POST \/conversations\/cli-1\/messages 202 \d+ms$/),
    expect.stringMatching(/^\S+Z GET \/conversations\/cli-1\/events 200 \d+ms$/),
    expect.stringMatching(/^\S+Z GET \/conversations\/cli-1\/events 200 \d+ms$/),
  ]);
  for (const secret of [token, OPERATOR, SECRET, 'access_token']) expect(bridge.output()).not.toContain(secret);
});
