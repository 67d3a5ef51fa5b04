import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../../src/client/durable-agent-client.js';
import { serveCodec } from '../../../src/codec/codec-server.js';
import { parseMcpConfig, type HttpServerConfig } from '../../../src/worker/mcp/config.js';
import { MemoryTokenStore } from '../../../src/worker/mcp/oauth/token-store.js';
import { serveStreamingBridge } from '../../../src/bridge/serve.js';
import { startModernMcpServer } from '../../../src/testing/mcp-modern-server.js';
import { startTestMcpServer } from '../../../src/testing/mcp-test-server.js';
import { FIXTURE_KEY } from '../../codec/fixture-key.js';
import { MACHINE_CLIENT, startProtectedMcp } from '../../helpers/protected-mcp-server.js';
import { freePort, httpServer, usePools } from '../helpers.js';

/**
 * `durable-agent dev` runs the codec server in the worker's process, and `serve` can run beside an embedder's worker:
 * serving them must leave Node's own `Request` and `Response` in place, or every `instanceof Response` in the process
 * fails for what `fetch` returns, and the MCP SDK's OAuth client reads a refused client as a garbled server_error.
 */

const nodeRequest = globalThis.Request;
const nodeResponse = globalThis.Response;
const cleanups: Array<() => Promise<unknown>> = [];
const pool = usePools();

afterAll(async () => {
  await Promise.allSettled(cleanups.reverse().map((cleanup) => cleanup()));
});

describe('the codec server and the bridge, served in the process of a worker', () => {
  it("keep Node's Request and Response, so a refused OAuth client still reads invalid_client", async () => {
    const codec = await serveCodec({ keys: [FIXTURE_KEY], token: 'codec-token-0123456789' });
    cleanups.push(() => codec.close());
    // The bridge only needs Temporal for its routes; a lazy connection to a closed port is never dialled here.
    const connection = Connection.lazy({ address: `127.0.0.1:${await freePort()}` });
    cleanups.push(() => connection.close());
    const agent = new DurableAgentClient({ client: new Client({ connection }), taskQueue: 'unused' });
    const bridge = await serveStreamingBridge({ agent, port: 0 });
    cleanups.push(() => bridge.close());
    expect((await fetch(`${bridge.url}/healthz`)).status).toBe(200);

    expect(globalThis.Response).toBe(nodeResponse);
    expect(globalThis.Request).toBe(nodeRequest);
    expect(await fetch(`${codec.url}/decode`, { method: 'POST' })).toBeInstanceOf(Response);

    const crm = await startProtectedMcp();
    cleanups.push(() => crm.close());
    const servers = parseMcpConfig(
      JSON.stringify({
        mcpServers: {
          crm: {
            url: crm.mcp.url,
            oauth: { grant: 'client_credentials', clientId: MACHINE_CLIENT.clientId, clientSecret: '${CRM_SECRET}' },
          },
        },
      }),
      'mcp.json',
      { CRM_SECRET: `wrong-${randomUUID()}` },
    ).servers as HttpServerConfig[];
    const listing = await pool(servers, { tokenStore: new MemoryTokenStore() }).listTools();
    expect(listing.unavailable).toEqual([
      { server: 'crm', reason: expect.stringMatching(/refused to issue a token \(invalid_client: /) },
    ]);
    expect(listing.unavailable[0]!.reason).not.toContain('[object Response]');
  });
});

describe("the testing kit's MCP servers, served in the process of a test", () => {
  it("keep Node's Request and Response, answering requests of both eras", async () => {
    const modern = await startModernMcpServer();
    cleanups.push(() => modern.close());
    const test = await startTestMcpServer({ transport: 'http' });
    cleanups.push(() => test.close());
    const listing = await pool([httpServer('modern', modern.url), httpServer('test', test.url)]).listTools();
    expect(listing.unavailable).toEqual([]);
    expect(listing.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['modern__echo', 'test__echo']));

    expect(globalThis.Response).toBe(nodeResponse);
    expect(globalThis.Request).toBe(nodeRequest);
    expect(await fetch(modern.url, { method: 'POST', body: '{}' })).toBeInstanceOf(Response);
  });
});
