import { describe, expect, test } from 'vitest';
import { McpPool } from '../../src/worker/mcp/pool.js';
import { rejectionOf, stdioServer } from './helpers.js';

/**
 * A worker closes its MCP pool when it shuts down. A server still starting (one that never answers `initialize`) is
 * stopped then, not waited for: its connect timeout (30 s, and again for the older protocol) would hold up the
 * shutdown.
 */
describe('closing the pool', () => {
  test('while a server is still starting: close returns at once, stops the server, and the waiting call fails', async () => {
    const pool = new McpPool([stdioServer('sluggish', process.execPath, ['-e', 'setInterval(() => {}, 1000)'])], {
      onServerStderr: () => undefined,
      logger: { warn: () => undefined, debug: () => undefined },
    });
    const listing = pool.listTools();
    const call = rejectionOf(pool.callTool({ server: 'sluggish', originalName: 'anything' }, {}));
    // The server process is running and has been sent `initialize`.
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    const started = Date.now();
    await pool.close();
    // Far below the 30 s connect timeout even on a loaded machine.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await call).toMatchObject({ message: expect.stringMatching(/MCP server "sluggish".*shutting down|closed/) });
    const { tools, unavailable } = await listing;
    expect(tools).toEqual([]);
    expect(unavailable.map(({ server }) => server)).toEqual(['sluggish']);
  }, 120_000);
});
