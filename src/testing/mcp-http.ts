import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

export interface ServedMcp {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:40123/mcp`, for an `mcpServers` entry's `url`. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serve an MCP server of your own over Streamable HTTP in this process, statelessly (a fresh server per request),
 * so a test can give its agent real tools without building a separate program.
 */
export async function serveMcpOverHttp(
  createMcpServer: () => McpServer,
  options: { port?: number; host?: string } = {},
): Promise<ServedMcp> {
  const host = options.host ?? '127.0.0.1';
  const http = createServer((request, response) => {
    if (!request.url?.startsWith('/mcp')) {
      response.writeHead(404).end();
      return;
    }
    const server = createMcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500);
        response.end(String(error));
      });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/mcp`,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
