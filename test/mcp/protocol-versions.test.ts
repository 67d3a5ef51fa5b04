import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, test } from 'vitest';
import { startModernMcpServer, type RunningModernServer } from '../../src/testing/mcp-modern-server.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { httpServer, mcpTool, publishedServerEntry, resultText, stdioServer, usePools } from './helpers.js';

/**
 * Version negotiation: without configuration, an HTTP server that speaks 2026-07-28 is spoken to without a session,
 * and one that does not (our v1-built test server, the published servers) through the 2025-11-25 `initialize` session;
 * a stdio server through the session whatever it offers, unless `protocolVersion` pins another revision.
 */

const createPool = usePools();
const modernEntry = fileURLToPath(new URL('../../dist/testing/mcp-modern-server.js', import.meta.url));

let modern: RunningModernServer | undefined;
let legacy: RunningTestMcpServer | undefined;
afterEach(async () => {
  await modern?.close();
  await legacy?.close();
  modern = legacy = undefined;
});

describe('version negotiation', () => {
  test('over Streamable HTTP: 2026-07-28 without a session to a modern server, initialize to an older one', async () => {
    modern = await startModernMcpServer();
    legacy = await startTestMcpServer({ transport: 'http', port: 0, legacyOnly: true });
    const pool = createPool([httpServer('modern', modern.url), httpServer('legacy', legacy.url)]);

    const { tools, unavailable } = await pool.listTools();
    expect(unavailable).toEqual([]);
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['modern__echo', 'modern__ask_name']));
    expect(resultText(await pool.callTool(mcpTool('modern', 'echo'), { text: 'hi' }))).toBe('hi');
    expect(resultText(await pool.callTool(mcpTool('legacy', 'echo'), { text: 'hi' }))).toBe('hi');

    expect(pool.status()).toEqual([
      expect.objectContaining({ server: 'modern', protocolVersion: '2026-07-28', sessionId: undefined }),
      expect.objectContaining({ server: 'legacy', protocolVersion: '2025-11-25', sessionId: expect.any(String) }),
    ]);
    // Every request reached the modern server in the 2026-07-28 era: no initialize, no fallback.
    expect(new Set(modern.counters.eras)).toEqual(new Set(['modern']));
    expect(modern.counters.calls).toEqual({ echo: 1 });
  });

  test('over stdio: the 2025-11-25 session by default, even to a server that offers 2026-07-28', async () => {
    const pool = createPool([stdioServer('modern', process.execPath, [modernEntry])]);
    expect(resultText(await pool.callTool(mcpTool('modern', 'echo'), { text: 'hi' }))).toBe('hi');
    expect(pool.status()[0]).toMatchObject({ protocolVersion: '2025-11-25', sessionId: undefined, connects: 1 });
    // Its input_required answers still reach the person: the SDK server asks them by request in a session.
    const greeting = await pool.callTool(
      mcpTool('modern', 'ask_name'),
      { message: 'Who is there?' },
      { onElicitation: () => Promise.resolve({ action: 'accept', content: { name: 'Ada' } }) },
    );
    expect(resultText(greeting)).toBe('Hello, Ada');
  });

  test('over stdio pinned to 2026-07-28: one process per server, the era remembered when it is started again', async () => {
    const pool = createPool([
      stdioServer('modern', process.execPath, [modernEntry], { protocolVersion: '2026-07-28' }),
      stdioServer('everything', process.execPath, [publishedServerEntry('server-everything'), 'stdio']),
    ]);
    expect(resultText(await pool.callTool(mcpTool('modern', 'echo'), { text: 'hi' }))).toBe('hi');
    expect((await pool.listTools()).unavailable).toEqual([]);
    const [modernStatus, everythingStatus] = pool.status();
    expect(modernStatus).toMatchObject({ protocolVersion: '2026-07-28', connects: 1 });
    expect(everythingStatus).toMatchObject({ protocolVersion: '2025-11-25', connects: 1 });

    process.kill(modernStatus!.pid!, 'SIGKILL');
    await expect.poll(() => pool.status()[0]!.connected).toBe(false);
    expect(resultText(await pool.callTool(mcpTool('modern', 'echo'), { text: 'again' }))).toBe('again');
    expect(pool.status()[0]).toMatchObject({ protocolVersion: '2026-07-28', connects: 2 });
  });

  test('pinned to 2026-07-28, a server that speaks only 2025-11-25 is left out, and the reason says so', async () => {
    const pool = createPool([
      stdioServer('everything', process.execPath, [publishedServerEntry('server-everything'), 'stdio'], {
        protocolVersion: '2026-07-28',
      }),
    ]);
    const { tools, unavailable } = await pool.listTools();
    expect(tools).toEqual([]);
    expect(unavailable).toEqual([
      { server: 'everything', reason: expect.stringMatching(/^MCP server "everything": .*2026-07-28/) },
    ]);
  });

  test('a 2026-07-28 question (input_required) is put to onElicitation, and the call is sent again with the answer', async () => {
    modern = await startModernMcpServer();
    const pool = createPool([httpServer('modern', modern.url)]);
    const asked: unknown[] = [];
    const result = await pool.callTool(
      mcpTool('modern', 'ask_name'),
      { message: 'Who is there?' },
      {
        onElicitation: (request) => {
          asked.push(request);
          return Promise.resolve({ action: 'accept', content: { name: 'Ada' } });
        },
      },
    );
    expect(resultText(result)).toBe('Hello, Ada');
    expect(asked).toEqual([
      expect.objectContaining({
        mode: 'form',
        message: 'Who is there?',
        requestedSchema: expect.objectContaining({ properties: { name: expect.objectContaining({ type: 'string' }) } }),
      }),
    ]);
    expect(modern.counters.calls).toEqual({ ask_name: 2 });
  });

  test('a 2026-07-28 server that leaves resultType out of its results is read as complete; its questions still work', async () => {
    modern = await startModernMcpServer({ omitResultType: true });
    const pool = createPool([httpServer('modern', modern.url)]);
    const { tools, unavailable } = await pool.listTools();
    expect(unavailable).toEqual([]);
    expect(tools.map((tool) => tool.name)).toContain('modern__echo');
    expect(resultText(await pool.callTool(mcpTool('modern', 'echo'), { text: 'hi' }))).toBe('hi');
    const greeting = await pool.callTool(
      mcpTool('modern', 'ask_name'),
      {},
      { onElicitation: () => Promise.resolve({ action: 'accept', content: { name: 'Ada' } }) },
    );
    expect(resultText(greeting)).toBe('Hello, Ada');
    expect(pool.status()[0]).toMatchObject({ protocolVersion: '2026-07-28', connects: 1 });
    expect(modern.counters.calls).toEqual({ echo: 1, ask_name: 2 });
  });

  test('a 2026-07-28 server tells of a changed tool list through subscriptions/listen; the tool can be called at once', async () => {
    const pool = createPool([
      stdioServer('modern', process.execPath, [modernEntry], { protocolVersion: '2026-07-28' }),
    ]);
    expect((await pool.listTools()).tools.map((tool) => tool.name)).not.toContain('modern__late');
    expect(resultText(await pool.callTool(mcpTool('modern', 'add_tool'), { name: 'late' }))).toBe('added late');
    await expect
      .poll(() => pool.callTool(mcpTool('modern', 'late'), { text: 'here' }).then(resultText, String))
      .toBe('here');
    expect(pool.status()[0]).toMatchObject({ protocolVersion: '2026-07-28', connects: 1 });
  });
});
