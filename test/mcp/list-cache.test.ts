import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { createMcpHandler, McpServer, type CacheHint } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { httpServer, usePools } from './helpers.js';

/**
 * A 2026-07-28 server says how long its tool list may be reused (`ttlMs`, SEP-2549). The pool lists every turn; within
 * the server's `ttlMs` that listing is served from the client's cache, with no request; a list without `ttlMs` (or
 * with 0) is asked for every time, so a server that changes its tools is seen at the next turn.
 */

const createPool = usePools();
let running: { close(): Promise<void> } | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

/** A v2 server over Streamable HTTP that counts the `tools/list` requests it answers. */
async function startListingServer(toolsListHint: CacheHint | undefined) {
  const counted = { lists: 0 };
  const handler = createMcpHandler(() => {
    const server = new McpServer(
      { name: 'list-cache-test-server', version: '1.0.0' },
      toolsListHint === undefined ? {} : { cacheHints: { 'tools/list': toolsListHint } },
    );
    server.registerTool(
      'echo',
      { description: 'Returns the text.', inputSchema: z.object({ text: z.string() }) },
      ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    return server;
  });
  const http: Server = createServer(
    getRequestListener(
      async (request) => {
        const body = request.method === 'POST' ? ((await request.clone().json()) as { method?: string }) : {};
        if (body.method === 'tools/list') counted.lists += 1;
        return handler.fetch(request);
      },
      { overrideGlobalObjects: false },
    ),
  );
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const server = {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    counted,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await handler.close();
    },
  };
  running = server;
  return server;
}

describe("a tool list's ttlMs", () => {
  test('within the ttlMs the server gave, a listing is served from cache: one request for three turns', async () => {
    const server = await startListingServer({ ttlMs: 60_000, cacheScope: 'private' });
    const pool = createPool([httpServer('cached', server.url)]);
    for (let turn = 0; turn < 3; turn += 1) {
      const { tools, unavailable } = await pool.listTools();
      expect(unavailable).toEqual([]);
      expect(tools.map((tool) => tool.name)).toEqual(['cached__echo']);
    }
    expect(server.counted.lists).toBe(1);
  });

  test('without a ttlMs every listing asks the server', async () => {
    const server = await startListingServer(undefined);
    const pool = createPool([httpServer('fresh', server.url)]);
    for (let turn = 0; turn < 3; turn += 1) {
      expect((await pool.listTools()).tools.map((tool) => tool.name)).toEqual(['fresh__echo']);
    }
    expect(server.counted.lists).toBe(3);
  });
});
