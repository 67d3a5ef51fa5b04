import { getEventListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { McpProtocolError, McpToolNotConfiguredError, McpTransportError } from '../../src/worker/mcp/errors.js';
import type { McpPool } from '../../src/worker/mcp/pool.js';
import {
  countTestServerEvents,
  startTestMcpServer,
  type RunningTestMcpServer,
} from '../../src/testing/mcp-test-server.js';
import {
  httpServer,
  isProcessAlive,
  mcpTool,
  rejectionOf,
  resultText,
  stdioServer,
  TEST_SERVER_ERAS,
  testServerStdio,
  usePools,
  useTemporaryDirectories,
  waitFor,
} from './helpers.js';

const createPool = usePools();
const temporaryDirectory = useTemporaryDirectories();

function pidOf(pool: McpPool, server: string): number {
  const pid = pool.status().find((status) => status.server === server)?.pid;
  if (pid === undefined) throw new Error(`no process for ${server}`);
  return pid;
}

describe.each(TEST_SERVER_ERAS)(
  'McpPool over stdio (our test server, $protocolVersion)',
  ({ protocolVersion, legacyOnly }) => {
    let counterFile: string;
    let pool: McpPool;
    const counts = () => countTestServerEvents(counterFile);

    beforeEach(() => {
      counterFile = path.join(temporaryDirectory(), 'events.jsonl');
      pool = createPool([testServerStdio('test', counterFile, {}, { legacyOnly })]);
    });

    test('pooling: concurrent first calls share one start, and every later call reuses the same process', async () => {
      const first = await Promise.all(
        Array.from({ length: 10 }, (_, index) => pool.callTool(mcpTool('test', 'echo'), { text: `call ${index}` })),
      );
      expect(first.map(resultText)).toEqual(Array.from({ length: 10 }, (_, index) => `call ${index}`));
      for (let index = 0; index < 20; index += 1) await pool.callTool(mcpTool('test', 'echo'), { text: 'again' });
      await pool.listTools();

      expect(counts()).toMatchObject({ processes: 1, sessions: 1, calls: { echo: 30 } });
      expect(pool.status()[0]).toMatchObject({ server: 'test', connected: true, connects: 1, protocolVersion });
    });

    test('reconnect: after the server process is killed, the next call starts a new one', async () => {
      await pool.callTool(mcpTool('test', 'echo'), { text: 'before' });
      const firstPid = pidOf(pool, 'test');
      process.kill(firstPid, 'SIGKILL');
      await waitFor(() => pool.status()[0]?.connected === false, 5000, 'the pool to notice the exit');

      const result = await pool.callTool(mcpTool('test', 'echo'), { text: 'after' });
      expect(resultText(result)).toBe('after');
      expect(pidOf(pool, 'test')).not.toBe(firstPid);
      expect(counts()).toMatchObject({ processes: 2, sessions: 2 });
      expect(pool.status()[0]?.connects).toBe(2);
    });

    test('server dies mid-call: the call fails as "request sent", and the next call reconnects', async () => {
      await pool.listTools();
      const firstPid = pidOf(pool, 'test');
      const error = await rejectionOf(pool.callTool(mcpTool('test', 'crash'), {}));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ server: 'test', requestSent: true, timedOut: false });
      expect((error as Error).message).toMatch(/test.*crash.*connection failed during the call/);

      expect(resultText(await pool.callTool(mcpTool('test', 'echo'), { text: 'back' }))).toBe('back');
      expect(pidOf(pool, 'test')).not.toBe(firstPid);
    });

    test('list_changed: a tool the server adds at runtime is in the next listTools and can be called', async () => {
      const before = (await pool.listTools()).tools.map((tool) => tool.name);
      expect(before).not.toContain('test__greet');

      await pool.callTool(mcpTool('test', 'add_tool'), { name: 'greet' });
      await waitFor(
        async () => (await pool.listTools()).tools.some((tool) => tool.name === 'test__greet'),
        5000,
        'test__greet to be listed',
      );
      expect(resultText(await pool.callTool(mcpTool('test', 'greet'), { text: 'hello' }))).toBe('hello');
      expect(counts().processes).toBe(1);
    });

    test('cancellation: aborting the signal cancels the request on the server and leaves the connection usable', async () => {
      const controller = new AbortController();
      const call = pool.callTool(mcpTool('test', 'hang'), {}, { signal: controller.signal });
      await waitFor(() => counts().calls.hang === 1, 10_000, 'the hang tool to start');
      const reason = new Error('interrupted by the user');
      controller.abort(reason);

      expect(await rejectionOf(call)).toBe(reason);
      await waitFor(() => counts().cancellations.hang === 1, 5000, 'the cancellation to reach the server');
      expect(resultText(await pool.callTool(mcpTool('test', 'echo'), { text: 'still here' }))).toBe('still here');
      expect(counts().processes).toBe(1);
    });

    test('timeout: a call that outlives timeoutMs fails as a sent, timed-out transport error, and is cancelled on the server', async () => {
      const error = await rejectionOf(pool.callTool(mcpTool('test', 'slow'), { delayMs: 10_000 }, { timeoutMs: 300 }));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ requestSent: true, timedOut: true });
      expect((error as Error).message).toContain('no answer within 300 ms');
      await waitFor(() => counts().cancellations.slow === 1, 5000, 'the cancellation to reach the server');
      // A slow tool is no reason to drop a healthy connection.
      expect(pool.status()[0]).toMatchObject({ connected: true, connects: 1 });
    });

    test('an isError result is returned as a normal result', async () => {
      const result = await pool.callTool(mcpTool('test', 'fail'), { message: 'disk full' });
      expect(result.isError).toBe(true);
      expect(resultText(result)).toBe('disk full');
    });

    test('a JSON-RPC error answer becomes McpProtocolError (the model will see it)', async () => {
      const error = await rejectionOf(pool.callTool(mcpTool('test', 'protocol_error'), {}));
      expect(error).toBeInstanceOf(McpProtocolError);
      expect((error as Error).message).toContain('protocol_error always answers with a JSON-RPC error');
    });

    test('progress notifications of a call reach onProgress', async () => {
      const progress: unknown[] = [];
      await pool.callTool(
        mcpTool('test', 'progress'),
        { steps: 3, delayMs: 0 },
        {
          onProgress: (update) => progress.push(update),
          // A busy client: while it is blocked the notifications and the result arrive, to be read together, where the
          // SDK's own handler (dispatched after the response that follows) lost them.
          beforeSend: () => setImmediate(() => blockFor(300)),
        },
      );
      expect(progress).toEqual([
        { progress: 1, total: 3, message: 'step 1' },
        { progress: 2, total: 3, message: 'step 2' },
        { progress: 3, total: 3, message: 'step 3' },
      ]);
    });

    test('beforeSend runs once the tool is known, right before the request goes out', async () => {
      const order: string[] = [];
      await pool.callTool(
        mcpTool('test', 'echo'),
        { text: 'x' },
        { beforeSend: () => order.push(`sent with ${counts().calls.echo ?? 0} calls`) },
      );
      order.push(`done with ${counts().calls.echo} calls`);
      expect(order).toEqual(['sent with 0 calls', 'done with 1 calls']);
    });

    test('calls sharing one long-lived signal leave no abort listeners on it', async () => {
      const controller = new AbortController();
      for (let index = 0; index < 15; index += 1) {
        await pool.callTool(mcpTool('test', 'echo'), { text: 'x' }, { signal: controller.signal });
      }
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });

    test('close() stops every stdio server process and later calls fail as retryable, not sent', async () => {
      await pool.listTools();
      const pid = pidOf(pool, 'test');
      expect(isProcessAlive(pid)).toBe(true);
      await pool.close();
      await waitFor(() => !isProcessAlive(pid), 5000, 'the server process to exit');

      const error = await rejectionOf(pool.callTool(mcpTool('test', 'echo'), { text: 'late' }));
      expect(error).toMatchObject({ name: 'McpTransportError', requestSent: false, retryable: true });
    });
  },
);

describe('McpPool configuration checks (stdio)', () => {
  test('allowTools/denyTools: filtered tools are not listed and are refused when called', async () => {
    const counterFile = path.join(temporaryDirectory(), 'events.jsonl');
    const pool = createPool([
      testServerStdio('test', counterFile, { allowTools: ['echo', 'set_*', 'increment'], denyTools: ['increment'] }),
    ]);
    expect((await pool.listTools()).tools.map((tool) => tool.name)).toEqual(['test__echo', 'test__set_value']);

    const denied = await rejectionOf(pool.callTool({ server: 'test', originalName: 'increment' }, {}));
    expect(denied).toBeInstanceOf(McpToolNotConfiguredError);
    expect((denied as Error).message).toContain('excluded by its allowTools/denyTools');
    const unlisted = await rejectionOf(pool.callTool(mcpTool('test', 'fail'), {}));
    expect(unlisted).toBeInstanceOf(McpToolNotConfiguredError);
    expect((unlisted as Error).message).toContain('Tool "fail" of MCP server "test" is excluded');
    expect(countTestServerEvents(counterFile).calls).toEqual({});
  });

  test('unknown or disabled servers and vanished tools are McpToolNotConfiguredError naming what exists', async () => {
    const counterFile = path.join(temporaryDirectory(), 'events.jsonl');
    const pool = createPool([
      testServerStdio('test', counterFile),
      testServerStdio('spare', counterFile, { disabled: true }),
    ]);
    expect((await rejectionOf(pool.callTool({ server: 'gone', originalName: 'echo' }, {}))) as Error).toMatchObject({
      name: 'McpToolNotConfiguredError',
      message: expect.stringContaining('No MCP server named "gone" is configured; configured servers: test.'),
    });
    expect((await rejectionOf(pool.callTool({ server: 'spare', originalName: 'echo' }, {}))) as Error).toMatchObject({
      message: expect.stringContaining('(it is disabled)'),
    });
    expect((await rejectionOf(pool.callTool({ server: 'test', originalName: 'renamed' }, {}))) as Error).toMatchObject({
      name: 'McpToolNotConfiguredError',
      message: expect.stringContaining('does not offer a tool "renamed" any more; it offers: echo,'),
    });
    // The disabled server was never started.
    expect(countTestServerEvents(counterFile).processes).toBe(1);
  });

  test('servers that fail to start are left out of listTools, named with the reason and their stderr', async () => {
    const counterFile = path.join(temporaryDirectory(), 'events.jsonl');
    const pool = createPool([
      testServerStdio('good', counterFile),
      stdioServer('broken', process.execPath, ['-e', 'console.error("FILES_TOKEN is not set"); process.exit(3)']),
      stdioServer('missing', 'durable-agent-no-such-command', []),
    ]);
    const { tools, unavailable } = await pool.listTools();
    expect(new Set(tools.map((tool) => tool.server))).toEqual(new Set(['good']));
    expect(unavailable.map(({ server }) => server)).toEqual(['broken', 'missing']);
    const [broken, missing] = unavailable.map(({ reason }) => reason);
    expect(broken).toMatch(/^MCP server "broken": could not start ".*node.*": .*Connection closed/);
    expect(broken).toContain('FILES_TOKEN is not set');
    expect(missing).toMatch(/^MCP server "missing": could not start "durable-agent-no-such-command": .*ENOENT/);
    expect(missing).toContain('check "command" and "cwd" in the MCP config');
    // The healthy server still works for calls.
    expect(resultText(await pool.callTool({ server: 'good', originalName: 'echo' }, { text: 'ok' }))).toBe('ok');
  });

  test('a call cancelled while its server is still starting fails at once with the abort reason', async () => {
    // A "server" that starts but never answers initialize.
    const pool = createPool([stdioServer('sluggish', process.execPath, ['-e', 'setInterval(() => {}, 1000)'])]);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(new Error('cancelled by the workflow')), 200);
    const error = await rejectionOf(
      pool.callTool({ server: 'sluggish', originalName: 'anything' }, {}, { signal: controller.signal }),
    );
    expect(error).toMatchObject({ message: 'cancelled by the workflow' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  test('namespacing: two servers with the same tools get distinct names that map back to the right server', async () => {
    const directory = temporaryDirectory();
    const pool = createPool([
      testServerStdio('alpha', path.join(directory, 'alpha.jsonl')),
      testServerStdio('beta.v2', path.join(directory, 'beta.jsonl')),
    ]);
    const { tools } = await pool.listTools();
    const names = tools.map((tool) => tool.name);
    expect(names).toContain('alpha__echo');
    expect(names).toContain('beta_v2__echo');
    const increment = tools.find((tool) => tool.name === 'beta_v2__increment')!;
    expect(increment).toMatchObject({ server: 'beta.v2', originalName: 'increment' });
    await pool.callTool(increment, {});
    expect(countTestServerEvents(path.join(directory, 'beta.jsonl')).calls).toEqual({ increment: 1 });
    expect(countTestServerEvents(path.join(directory, 'alpha.jsonl')).calls).toEqual({});
  });
});

describe.each(TEST_SERVER_ERAS)(
  'McpPool over Streamable HTTP (our test server, in-process, $protocolVersion)',
  ({ protocolVersion, legacyOnly }) => {
    let server: RunningTestMcpServer;
    let pool: McpPool;

    beforeEach(async () => {
      server = await startTestMcpServer({ transport: 'http', port: 0, legacyOnly });
      pool = createPool([httpServer('web', server.url)]);
    });
    afterEach(async () => {
      await pool.close();
      await server.close();
    });

    test('pooling: many calls share one connection (at 2025-11-25 one session, at 2026-07-28 none)', async () => {
      await Promise.all(Array.from({ length: 10 }, () => pool.callTool(mcpTool('web', 'echo'), { text: 'x' })));
      for (let index = 0; index < 10; index += 1) await pool.callTool(mcpTool('web', 'echo'), { text: 'y' });
      expect(server.counters).toMatchObject({ sessions: legacyOnly ? 1 : 0, calls: { echo: 20 } });
      expect(pool.status()[0]).toMatchObject({ transport: 'http', connected: true, connects: 1, protocolVersion });
      if (legacyOnly) expect(pool.status()[0]?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      else expect(pool.status()[0]?.sessionId).toBeUndefined();
    });

    test.runIf(legacyOnly)('session lost (404): the pool opens a new session and sends the call once', async () => {
      await pool.callTool(mcpTool('web', 'increment'), {});
      const firstSession = pool.status()[0]?.sessionId;
      await server.forgetSessions();

      expect(resultText(await pool.callTool(mcpTool('web', 'increment'), {}))).toBe('default = 1');
      expect(server.counters).toMatchObject({ sessions: 2, calls: { increment: 2 } });
      expect(pool.status()[0]?.sessionId).not.toBe(firstSession);
    });

    test('server down: calls fail as retryable transport errors, then as "not sent"; once it is back the pool reconnects', async () => {
      await pool.callTool(mcpTool('web', 'echo'), { text: 'x' });
      const port = server.port;
      await server.close();

      // The first call may go out on a kept-alive socket the server has just closed: whether it arrived is unknown.
      const first = await rejectionOf(pool.callTool(mcpTool('web', 'increment'), {}));
      expect(first).toBeInstanceOf(McpTransportError);
      expect(first).toMatchObject({ server: 'web', retryable: true });
      // That failure dropped the connection; reconnecting is refused, so nothing was sent.
      const second = await rejectionOf(pool.callTool(mcpTool('web', 'increment'), {}));
      expect(second).toMatchObject({ server: 'web', requestSent: false, retryable: true });
      expect((second as Error).message).toContain('ECONNREFUSED');

      server = await startTestMcpServer({ transport: 'http', port });
      expect(resultText(await pool.callTool(mcpTool('web', 'increment'), {}))).toBe('default = 1');
    });

    test('connection cut mid-call: the call fails as "request sent"', async () => {
      await pool.listTools();
      const error = await rejectionOf(pool.callTool(mcpTool('web', 'crash'), {}));
      expect(error).toBeInstanceOf(McpTransportError);
      expect(error).toMatchObject({ requestSent: true });
      expect(resultText(await pool.callTool(mcpTool('web', 'echo'), { text: 'again' }))).toBe('again');
    });

    test('cancellation: aborting the signal reaches the tool on the server', async () => {
      const controller = new AbortController();
      const call = pool.callTool(mcpTool('web', 'hang'), {}, { signal: controller.signal });
      await waitFor(() => server.counters.calls.hang === 1, 5000, 'the hang tool to start');
      controller.abort(new Error('stop'));
      expect(await rejectionOf(call)).toMatchObject({ message: 'stop' });
      await waitFor(() => server.counters.cancellations.hang === 1, 5000, 'the cancellation to reach the server');
    });

    test('list_changed over HTTP: a tool added at runtime appears in the next listTools', async () => {
      await pool.listTools();
      await pool.callTool(mcpTool('web', 'add_tool'), { name: 'late_tool' });
      await waitFor(
        async () => (await pool.listTools()).tools.some((tool) => tool.name === 'web__late_tool'),
        5000,
        'web__late_tool to be listed',
      );
    });

    test.runIf(legacyOnly)('close() ends the HTTP session on the server', async () => {
      await pool.listTools();
      expect(server.openSessions()).toBe(1);
      await pool.close();
      await waitFor(() => server.openSessions() === 0, 5000, 'the session to end');
    });

    test('an unreachable URL: listTools leaves the server out, naming it and the URL', async () => {
      const offline = createPool([httpServer('offline', 'http://127.0.0.1:9/mcp')]);
      const { tools, unavailable } = await offline.listTools();
      expect(tools).toEqual([]);
      expect(unavailable).toEqual([
        {
          server: 'offline',
          reason: expect.stringMatching(/^MCP server "offline": could not reach http:\/\/127\.0\.0\.1:9\/mcp: /),
        },
      ]);
    });
  },
);

describe('McpPool initialize', () => {
  test('clientInfo names durable-agent with the version in package.json', async () => {
    const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    // Records what the pool sends and answers nothing useful: only the first request matters here.
    const requests: unknown[] = [];
    const recorder = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      request.on('end', () => {
        requests.push(JSON.parse(body));
        response.writeHead(500).end();
      });
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = recorder.address() as { port: number };
      const pool = createPool([httpServer('recorder', `http://127.0.0.1:${port}/mcp`)]);
      expect((await pool.listTools()).unavailable).toHaveLength(1);
      // The first request is the version probe (2026-07-28), which carries the client's name in `_meta`.
      expect(requests[0]).toMatchObject({
        method: 'server/discover',
        params: {
          _meta: { 'io.modelcontextprotocol/clientInfo': { name: 'durable-agent', version: packageJson.version } },
        },
      });
    } finally {
      await new Promise((resolve) => recorder.close(resolve));
    }
  });
});

/** Keeps this thread busy, as a loaded worker is, so that what arrives meanwhile is read at once afterwards. */
function blockFor(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // Busy on purpose.
  }
}
