import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, test } from 'vitest';
import { STANDALONE_STREAM_WAIT_MS } from '../../src/worker/mcp/standalone-stream.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { httpServer, mcpTool, resultText, usePools } from './helpers.js';

/**
 * A 2025-11-25 session's stream for the server's own messages (the client's `GET`, src/worker/mcp/standalone-stream.ts): our
 * test server, like any SDK v2 server, sends a tool call's question there, and drops it while that stream is not open.
 * The pool must not send a call on a session before the server has answered that `GET`, however late it does.
 */

const createPool = usePools();
let server: RunningTestMcpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Middleware = (request: IncomingMessage, response: ServerResponse, next: () => void) => void;

/** The test server, legacy-only, with its session streams' `GET`s handled by `onGet`. */
async function serverWithGets(onGet: Middleware): Promise<RunningTestMcpServer> {
  server = await startTestMcpServer({
    transport: 'http',
    legacyOnly: true,
    middleware: (request, response, next) => (request.method === 'GET' ? onGet(request, response, next) : next()),
  });
  return server;
}

const answerAda = () => Promise.resolve({ action: 'accept' as const, content: { name: 'Ada' } });

describe("a 2025-11-25 session's stream for the server's messages", () => {
  test('a question sent there reaches the call even when the server opens the stream late', async () => {
    // Later than the listing and the call take to reach the server, within the wait for the stream.
    const { url } = await serverWithGets((_request, _response, next) => void setTimeout(next, 2_000));
    const pool = createPool([httpServer('legacy', url)]);
    const asked: string[] = [];
    const result = await pool.callTool(
      mcpTool('legacy', 'ask_user'),
      { message: 'Who are you?' },
      {
        // Without the wait the question is lost and the call runs out of its time, unasked.
        timeoutMs: 6_000,
        onElicitation: (request) => {
          asked.push(request.message);
          return answerAda();
        },
      },
    );
    expect(asked).toEqual(['Who are you?']);
    expect(resultText(result)).toBe('accept {"name":"Ada"}');
  });

  test('a server without the stream (405) is used at once, and without a warning', async () => {
    const { url } = await serverWithGets((_request, response) => response.writeHead(405).end());
    const warnings: string[] = [];
    const pool = createPool([httpServer('legacy', url)], {
      logger: { warn: (line) => warnings.push(line), debug: () => undefined },
    });
    const startedAt = Date.now();
    expect(resultText(await pool.callTool(mcpTool('legacy', 'echo'), { text: 'hi' }))).toBe('hi');
    expect(Date.now() - startedAt).toBeLessThan(STANDALONE_STREAM_WAIT_MS);
    expect(warnings).toEqual([]);
  });

  test.each([
    [
      'answers the GET with an error',
      (_request: IncomingMessage, response: ServerResponse) => response.writeHead(500).end(),
      'it answered HTTP 500',
    ],
    ['never answers the GET', () => undefined, `it did not answer within ${STANDALONE_STREAM_WAIT_MS} ms`],
  ])(
    'a server that %s is used all the same, with a warning that its questions may be lost',
    async (_what, onGet, problem) => {
      const { url } = await serverWithGets(onGet);
      const warnings: string[] = [];
      const pool = createPool([httpServer('legacy', url)], {
        logger: { warn: (line) => warnings.push(line), debug: () => undefined },
      });
      expect(resultText(await pool.callTool(mcpTool('legacy', 'echo'), { text: 'hi' }))).toBe('hi');
      expect(warnings).toEqual([
        `MCP server "legacy" did not open its session's stream for messages outside responses (${problem}): ` +
          'a question it sends there before the stream is open is lost.',
      ]);
    },
  );
});
