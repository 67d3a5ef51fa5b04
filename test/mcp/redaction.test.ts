import { defaultFailureConverter, defaultPayloadConverter } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, describe, expect, test } from 'vitest';
import { createToolActivities } from '../../src/worker/activities/tool-calls/call.js';
import { parseMcpConfig } from '../../src/worker/mcp/config.js';
import { Redactor, redactorFor } from '../../src/worker/mcp/redaction.js';
import type { CallToolInput } from '../../src/shared/types.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { allText, canary, occurrences } from '../helpers/secrets.js';
import { freePort, mcpTool, recordingLogger, rejectionOf, startGate, usePools, type Gate } from './helpers.js';

/**
 * No secret leaves the pool (issue 15, item 1): not in what `listTools` reports, not in what a call throws (message,
 * stack, causes), not in what the tool activity fails with as Temporal encodes it, not in the worker's log.
 */

const createPool = usePools();

const servers: RunningTestMcpServer[] = [];
const gates: Gate[] = [];
afterEach(async () => {
  await Promise.all([...servers.splice(0).map((server) => server.close()), ...gates.splice(0).map((g) => g.close())]);
});

describe('Redactor', () => {
  test('replaces every secret wherever it appears, longest first, also percent- or JSON-encoded', () => {
    const redactor = new Redactor([
      { value: 's3cret/value with space', label: '${TOKEN}' },
      { value: 'Bearer s3cret/value with space', label: '[header Authorization]' },
      { value: 'abc', label: '[too short]' },
    ]);
    expect(redactor.text('sent Bearer s3cret/value with space to https://x/?k=s3cret%2Fvalue%20with%20space')).toBe(
      'sent [header Authorization] to https://x/?k=${TOKEN}',
    );
    expect(redactor.text('{"key":"s3cret/value with space"} abc')).toBe('{"key":"${TOKEN}"} abc');
  });

  test('redacts the message and stack of an error and of each of its causes, in place', () => {
    const redactor = new Redactor([{ value: 'hunter2-hunter2', label: '${PASSWORD}' }]);
    const cause = new TypeError('fetch failed for hunter2-hunter2');
    const error = new Error('outer hunter2-hunter2', { cause });
    expect(redactor.error(error)).toBe(error);
    expect(allText(error)).not.toContain('hunter2-hunter2');
    expect(error.message).toBe('outer ${PASSWORD}');
    expect(cause.stack).toMatch(/^TypeError: fetch failed for \$\{PASSWORD\}/);
  });

  test('a server config built from a file: secret-looking and marked values, headers, URL credentials; never paths or hosts', () => {
    const env = {
      TOKEN: 'token-value-1',
      HOST: 'mcp.internal.example',
      REPO: '/srv/repositories/main',
      DEPLOY: 'deploy-value-2',
      SIGNATURE_VALUE: 'sig-value-3x',
    };
    const [web, local] = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          web: {
            url: 'https://robot:pa55word@${HOST}/mcp?sig=${SIGNATURE_VALUE}&team=platform-team',
            headers: { Authorization: 'Bearer ${TOKEN}', 'X-Team': 'literal-team-key' },
          },
          local: {
            command: 'server',
            args: ['--repository', '${REPO}', '--deploy=${DEPLOY}'],
            env: { API_KEY: '${TOKEN}', MODE: 'literal-mode-value', LOOKUP: 'literal-lookup-value' },
            secrets: ['DEPLOY', 'LOOKUP'],
          },
        },
      }),
      'mcp.json',
      env,
    ).servers;
    const text =
      'https://robot:pa55word@mcp.internal.example/mcp?sig=sig-value-3x&team=platform-team Bearer token-value-1 ' +
      'literal-team-key token-value-1';
    expect(redactorFor(web!).text(text)).toBe(
      'https://[user]:[password]@mcp.internal.example/mcp?sig=${SIGNATURE_VALUE}&team=platform-team ' +
        '[header Authorization] [header X-Team] ${TOKEN}',
    );
    expect(
      redactorFor(local!).text(
        '/srv/repositories/main literal-mode-value token-value-1 deploy-value-2 literal-lookup-value',
      ),
    ).toBe('/srv/repositories/main literal-mode-value ${TOKEN} ${DEPLOY} [env LOOKUP]');
  });

  test('secrets: names a ${VAR} of the entry or a key of its env, or the file, server and key are named', () => {
    const parse = (server: object) =>
      parseMcpConfig(JSON.stringify({ mcpServers: { git: server } }), 'mcp.json', { REPO: '/srv/repo' });
    expect(() => parse({ command: 'git-server', args: ['${REPO}'], secrets: ['REPO_TOKEN'] })).toThrow(
      'mcp.json: server "git" key "secrets[0]": "REPO_TOKEN" is neither a ${VAR} of this entry nor a key of its "env" (it has "REPO")',
    );
    expect(() => parse({ command: 'git-server', secrets: 'REPO' })).toThrow(
      'mcp.json: server "git" key "secrets": expected an array of variable names such as ["API_KEY"], got string "REPO".',
    );
    expect(parse({ command: 'git-server', args: ['${REPO}'], secrets: ['REPO'] }).servers[0]!.secrets).toEqual([
      'REPO',
    ]);
  });
});

describe('what the pool reports for failing servers carries no secret', () => {
  test('unreachable URL, rejected header, a stdio server that prints its key: listing, calls, activity failures, logs', async () => {
    const secret = canary('secret');
    const literal = canary('literal');
    const closedPort = await freePort();
    const refusing = await startGate('http://127.0.0.1:9/mcp', 401);
    gates.push(refusing);
    const upstream = await startTestMcpServer({ transport: 'http', port: 0 });
    servers.push(upstream);
    const revocable = await startGate(upstream.url);
    gates.push(revocable);
    const printKey = 'console.error("starting with key " + process.env.API_KEY); process.exit(1)';
    const config = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          offline: { url: `http://127.0.0.1:${closedPort}/mcp/\${DA_SECRET}?key=\${DA_SECRET}` },
          refused: { url: refusing.url, headers: { Authorization: 'Bearer ${DA_SECRET}', 'X-Api-Key': literal } },
          revoked: { url: revocable.url, headers: { Authorization: 'Bearer ${DA_SECRET}' } },
          leaky: { command: process.execPath, args: ['-e', printKey], env: { API_KEY: '${DA_SECRET}' } },
          'leaky-literal': { command: process.execPath, args: ['-e', printKey], env: { API_KEY: literal } },
        },
      }),
      'mcp.json',
      { DA_SECRET: secret },
    );
    const log = recordingLogger();
    const stderr: string[] = [];
    const pool = createPool(config.servers, {
      logger: log.logger,
      onServerStderr: (server, line) => stderr.push(`${server}: ${line}`),
      outageBackoffMs: 0,
    });

    const first = await pool.listTools();
    expect(first.unavailable.map(({ server }) => server)).toEqual(['offline', 'refused', 'leaky', 'leaky-literal']);
    const reasons = new Map(first.unavailable.map(({ server, reason }) => [server, reason]));
    // Still useful: the URL as written, what went wrong, the server's stderr with the key replaced by its name.
    expect(reasons.get('offline')).toContain(
      `could not reach http://127.0.0.1:${closedPort}/mcp/\${DA_SECRET}?key=\${DA_SECRET}`,
    );
    expect(reasons.get('refused')).toContain('rejected our credentials (HTTP 401)');
    expect(reasons.get('refused')).toContain('"authorization":"[header Authorization]"');
    expect(reasons.get('refused')).toContain('"x-api-key":"[header X-Api-Key]"');
    expect(reasons.get('leaky')).toContain('starting with key ${DA_SECRET}');
    expect(reasons.get('leaky-literal')).toContain('starting with key [env API_KEY]');

    revocable.reject(401);
    const activities = createToolActivities({ pool });
    const activityFailures: unknown[] = [];
    const callErrors: unknown[] = [];
    for (const server of ['offline', 'refused', 'revoked', 'leaky', 'leaky-literal']) {
      callErrors.push(await rejectionOf(pool.callTool(mcpTool(server, 'echo'), { text: 'x' })));
      const input: CallToolInput = {
        toolCallId: 'call_1',
        tool: {
          name: `${server}__echo`,
          server,
          originalName: 'echo',
          annotations: { readOnlyHint: true },
          timeoutMs: 5000,
        },
        arguments: { text: 'x' },
      };
      const environment = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
      const failure = await rejectionOf(environment.run(activities.callTool, input));
      // What Temporal would write into the ActivityTaskFailed event.
      activityFailures.push(defaultFailureConverter.errorToFailure(failure, defaultPayloadConverter));
    }
    const second = await pool.listTools();

    const everything = [
      allText(first),
      allText(second),
      ...callErrors.map(allText),
      ...activityFailures.map(allText),
      allText(pool.status()),
      ...log.warn,
      ...log.info,
      ...log.debug,
      ...stderr,
    ].join('\n');
    expect(everything).toContain('rejected our credentials');
    expect(occurrences(everything, secret)).toEqual([]);
    expect(occurrences(everything, literal)).toEqual([]);
  });
});
