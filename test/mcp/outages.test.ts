import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, describe, expect, test } from 'vitest';
import { createToolActivities } from '../../src/worker/activities/tool-calls/call.js';
import { McpTransportError } from '../../src/worker/mcp/errors.js';
import { FailureType } from '../../src/shared/errors.js';
import type { CallToolInput } from '../../src/shared/types.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import {
  freePort,
  httpServer,
  mcpTool,
  recordingLogger,
  rejectionOf,
  resultText,
  startGate,
  stdioServer,
  usePools,
  useTemporaryDirectories,
  type Gate,
} from './helpers.js';

/**
 * A broken server must not take the agent down (issue 15, item 2): it is left out of the listing, failures that no
 * retry can fix are not retried, a server that keeps failing is tried again only after a backoff, and each outage is
 * logged once.
 */

const createPool = usePools();
const temporaryDirectory = useTemporaryDirectories();

const servers: RunningTestMcpServer[] = [];
const gates: Gate[] = [];
afterEach(async () => {
  await Promise.all([...servers.splice(0).map((server) => server.close()), ...gates.splice(0).map((g) => g.close())]);
});

async function testServer(port = 0): Promise<RunningTestMcpServer> {
  const server = await startTestMcpServer({ transport: 'http', port });
  servers.push(server);
  return server;
}

async function gate(target: string, rejecting?: number): Promise<Gate> {
  const started = await startGate(target, rejecting);
  gates.push(started);
  return started;
}

function callInput(server: string, tool: string): CallToolInput {
  return {
    toolCallId: 'call_1',
    tool: { name: `${server}__${tool}`, server, originalName: tool, annotations: {}, timeoutMs: 5000 },
    arguments: {},
  };
}

const quietActivity = () => new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });

describe('a server that cannot be started or reached', () => {
  test('a command that does not exist: left out of the listing, and its calls fail non-retryable', async () => {
    const pool = createPool([stdioServer('missing', 'durable-agent-no-such-command', [])]);
    expect(await pool.listTools()).toEqual({
      tools: [],
      unavailable: [{ server: 'missing', reason: expect.stringContaining('ENOENT') }],
    });

    const error = await rejectionOf(pool.callTool(mcpTool('missing', 'anything'), {}));
    expect(error).toBeInstanceOf(McpTransportError);
    expect(error).toMatchObject({ requestSent: false, retryable: false });
    expect((error as Error).message).toMatch(
      /^MCP server "missing": could not start "durable-agent-no-such-command": spawn .*ENOENT \(no such command or directory: check "command" and "cwd" in the MCP config\)/,
    );

    // The tool activity does not ask Temporal to retry what no retry can fix.
    const activities = createToolActivities({ pool });
    const failure = await rejectionOf(quietActivity().run(activities.callTool, callInput('missing', 'anything')));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: FailureType.ToolTransportError, nonRetryable: true });
  });

  test('a server that keeps failing is not tried again before its backoff: one attempt, one log line', async () => {
    const starts = path.join(temporaryDirectory(), 'starts.txt');
    const script = `require('fs').appendFileSync(${JSON.stringify(starts)}, 'start\\n'); process.exit(1)`;
    const log = recordingLogger();
    const pool = createPool([stdioServer('crashy', process.execPath, ['-e', script])], {
      logger: log.logger,
      outageBackoffMs: 60_000,
    });
    for (let turn = 0; turn < 3; turn += 1) {
      const { unavailable } = await pool.listTools();
      expect(unavailable).toEqual([
        {
          server: 'crashy',
          reason: expect.stringMatching(/^MCP server "crashy": could not start .*Connection closed/),
        },
      ]);
    }
    // One attempt, one start (a stdio server gets the 2025-11-25 session without a version probe); later listings wait
    // for the backoff.
    expect(readFileSync(starts, 'utf8')).toBe('start\n');
    expect(log.warn.filter((line) => line.includes('unavailable'))).toEqual([
      expect.stringMatching(
        /^MCP server "crashy" is unavailable; its tools are left out of turns until it answers again \(next try in 60 s or later\): MCP server "crashy": could not start/,
      ),
    ]);
    expect(pool.status()[0]?.unavailable).toMatch(/could not start/);
  });

  test('once the backoff has run out the listing tries again; a server that is back is listed, and logged once', async () => {
    const port = await freePort();
    const log = recordingLogger();
    const pool = createPool([httpServer('web', `http://127.0.0.1:${port}/mcp`)], {
      logger: log.logger,
      outageBackoffMs: 0,
    });
    for (let turn = 0; turn < 3; turn += 1) {
      const { unavailable } = await pool.listTools();
      expect(unavailable).toEqual([
        {
          server: 'web',
          reason: expect.stringMatching(
            new RegExp(`^MCP server "web": could not reach http://127.0.0.1:${port}/mcp: `),
          ),
        },
      ]);
    }
    // Refused is retryable: it may work on the next attempt.
    expect(await rejectionOf(pool.callTool(mcpTool('web', 'echo'), { text: 'x' }))).toMatchObject({
      requestSent: false,
      retryable: true,
    });

    await testServer(port);
    for (let turn = 0; turn < 2; turn += 1) {
      const { tools, unavailable } = await pool.listTools();
      expect(unavailable).toEqual([]);
      expect(tools.map((tool) => tool.name)).toContain('web__echo');
    }
    expect(log.warn.filter((line) => line.includes('is unavailable'))).toHaveLength(1);
    expect(log.info).toEqual([
      expect.stringMatching(/^MCP server "web" is available again after \d+ s \(3 failed attempts\); its tools/),
    ]);
    expect(pool.status()[0]?.unavailable).toBeUndefined();
  });
});

describe('HTTP servers that refuse us', () => {
  for (const status of [401, 403]) {
    test(`HTTP ${status} on first contact: our credentials were rejected, not "could not reach"; not retryable`, async () => {
      const refusing = await gate('http://127.0.0.1:9/mcp', status);
      const pool = createPool([httpServer('guarded', refusing.url, { headers: { Authorization: 'Bearer wrong' } })]);
      const { unavailable } = await pool.listTools();
      const expected = `MCP server "guarded" rejected our credentials (HTTP ${status}): check the headers in the MCP config`;
      expect(unavailable).toEqual([{ server: 'guarded', reason: expect.stringContaining(expected) }]);
      expect(unavailable[0]?.reason).not.toContain('could not reach');

      const error = await rejectionOf(pool.callTool(mcpTool('guarded', 'echo'), { text: 'x' }));
      expect(error).toMatchObject({ name: 'McpTransportError', requestSent: false, retryable: false });
      expect((error as Error).message).toContain(expected);
      expect((error as Error).message).not.toContain('could not reach');
    });
  }

  test('HTTP 401 within a session (credentials revoked): the call and the next listing say so; not retryable', async () => {
    const server = await testServer();
    const door = await gate(server.url);
    const pool = createPool([httpServer('web', door.url)]);
    expect((await pool.listTools()).tools.length).toBeGreaterThan(0);
    expect(resultText(await pool.callTool(mcpTool('web', 'echo'), { text: 'before' }))).toBe('before');

    door.reject(401);
    const error = await rejectionOf(pool.callTool(mcpTool('web', 'echo'), { text: 'after' }));
    expect(error).toMatchObject({ name: 'McpTransportError', requestSent: false, retryable: false });
    expect((error as Error).message).toContain(
      'MCP server "web", tool "echo": the server rejected our credentials (HTTP 401): check the headers in the MCP config',
    );
    const { unavailable } = await pool.listTools();
    expect(unavailable[0]?.reason).toContain('rejected our credentials (HTTP 401)');
    expect(unavailable[0]?.reason).not.toContain('could not');
  });

  test('HTTP 404 on first contact: no MCP endpoint at that URL; not retryable', async () => {
    const server = await testServer();
    const pool = createPool([httpServer('web', server.url.replace(/\/mcp$/, '/elsewhere'))]);
    const { unavailable } = await pool.listTools();
    expect(unavailable[0]?.reason).toContain(
      'MCP server "web" has no MCP endpoint there (HTTP 404): check the url in the MCP config',
    );
    expect(await rejectionOf(pool.callTool(mcpTool('web', 'echo'), { text: 'x' }))).toMatchObject({
      retryable: false,
    });
  });
});
