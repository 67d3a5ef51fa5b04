import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, test } from 'vitest';
import { serveMcpOverHttp, type ServedMcp } from '../../src/testing/mcp-http.js';
import { countTestServerEvents } from '../../src/testing/mcp-test-server.js';
import {
  httpServer,
  mcpTool,
  resultText,
  TEST_SERVER_ERAS,
  testServerStdio,
  usePools,
  useTemporaryDirectories,
  waitFor,
} from './helpers.js';

/**
 * Tool lists never go stale (issue 15, item 4): every listing asks each server again, so a server that was restarted
 * or redeployed with other tools is offered with its new tools at the next turn; and `tools/list_changed` drops the
 * list the pool keeps for calls (at 2026-07-28 the notification arrives on the `subscriptions/listen` stream).
 */

const createPool = usePools();
const temporaryDirectory = useTemporaryDirectories();

const served: ServedMcp[] = [];
afterEach(async () => {
  await Promise.all(served.splice(0).map((server) => server.close()));
});

type Handler = (request: unknown, ...rest: unknown[]) => Promise<unknown>;

/** An MCP server over Streamable HTTP that offers one tool per name, and counts the `tools/list` requests it answers. */
async function serveTools(
  names: string[],
  { port = 0, legacyOnly = false } = {},
): Promise<ServedMcp & { listings: () => number }> {
  let listings = 0;
  const server = await serveMcpOverHttp(
    () => {
      const mcp = new McpServer({ name: 'deployable', version: '1.0.0' });
      for (const name of names) {
        mcp.registerTool(name, { description: `${name} of this deployment` }, () => ({
          content: [{ type: 'text', text: `${name} answered` }],
        }));
      }
      const handlers = (mcp.server as unknown as { _requestHandlers: Map<string, Handler> })._requestHandlers;
      const list = handlers.get('tools/list')!;
      handlers.set('tools/list', (request, ...rest) => {
        listings += 1;
        return list(request, ...rest);
      });
      return mcp;
    },
    { port, legacyOnly },
  );
  served.push(server);
  return { ...server, listings: () => listings };
}

describe.each(TEST_SERVER_ERAS)(
  'revalidation at every listing ($protocolVersion)',
  ({ protocolVersion, legacyOnly }) => {
    test('an HTTP server restarted on the same port with other tools: the next listing offers the new ones', async () => {
      const first = await serveTools(['lookup_v1'], { legacyOnly });
      const pool = createPool([httpServer('web', first.url)]);
      expect((await pool.listTools()).tools.map((tool) => tool.name)).toEqual(['web__lookup_v1']);
      expect(resultText(await pool.callTool(mcpTool('web', 'lookup_v1'), {}))).toBe('lookup_v1 answered');
      const firstSession = pool.status()[0]?.sessionId;
      expect(pool.status()[0]?.protocolVersion).toBe(protocolVersion);

      await first.close();
      await serveTools(['lookup_v2', 'report'], { port: first.port, legacyOnly });

      const { tools, unavailable } = await pool.listTools();
      expect(unavailable).toEqual([]);
      expect(tools.map((tool) => tool.name)).toEqual(['web__lookup_v2', 'web__report']);
      // At 2025-11-25 the restarted server no longer knows the session (404): a new one was opened and listed at once.
      if (legacyOnly) expect(pool.status()[0]?.sessionId).not.toBe(firstSession);
      expect(resultText(await pool.callTool(mcpTool('web', 'lookup_v2'), {}))).toBe('lookup_v2 answered');
    });

    test('a listing on an open connection costs one tools/list round trip, and no new session', async () => {
      const server = await serveTools(['lookup'], { legacyOnly });
      const pool = createPool([httpServer('web', server.url)]);
      await pool.listTools();
      expect(server.listings()).toBe(1);
      for (let turn = 0; turn < 5; turn += 1) await pool.listTools();
      expect(server.listings()).toBe(6);
      // Calls use the list kept for the session: no listing of their own.
      await pool.callTool(mcpTool('web', 'lookup'), {});
      expect(server.listings()).toBe(6);
      expect(pool.status()[0]).toMatchObject({ connects: 1, connected: true });
      expect(server.sessions()).toBe(legacyOnly ? 1 : 0);
    });
  },
);

describe.each(TEST_SERVER_ERAS)('tools/list_changed ($protocolVersion)', ({ protocolVersion, legacyOnly }) => {
  test('a tool the server adds at runtime can be called at once, without a listing in between', async () => {
    const counterFile = path.join(temporaryDirectory(), 'events.jsonl');
    const pool = createPool([testServerStdio('test', counterFile, {}, { legacyOnly })]);
    expect((await pool.listTools()).tools.map((tool) => tool.name)).not.toContain('test__greet');

    await pool.callTool(mcpTool('test', 'add_tool'), { name: 'greet' });
    // Calls check the tool against the list the pool keeps per session; only the notification can refresh it here.
    await waitFor(
      async () =>
        pool.callTool(mcpTool('test', 'greet'), { text: 'hello' }).then(
          (result) => resultText(result) === 'hello',
          () => false,
        ),
      5000,
      'the added tool to be callable',
    );
    expect(countTestServerEvents(counterFile)).toMatchObject({ processes: 1, calls: { greet: 1 } });
    expect(pool.status()[0]?.protocolVersion).toBe(protocolVersion);
  });
});
