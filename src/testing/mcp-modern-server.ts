import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import {
  acceptedContent,
  createMcpHandler,
  inputRequired,
  inputResponse,
  McpServer,
  type CallToolResult,
  type InputRequiredResult,
  type ProtocolEra,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

/**
 * An MCP server built on SDK v2 that speaks the 2026-07-28 revision (and 2025-11-25 to clients that only know it), for
 * tests of version negotiation and of questions asked by `input_required` results. Its tools:
 *
 * - `echo {text}`: returns the text.
 * - `ask_name {message?}`: answers `input_required` with a form for a name until a round brings one, then returns
 *   `Hello, <name>`; a declined or cancelled form returns `No name: <action>`.
 * - `add_tool {name}`: registers an echo tool by that name on this server instance (over stdio, the connection's).
 * - `ask_forever {}`: answers `input_required` every time, with a form and a `requestState` that counts the rounds
 *   (`round-1`, `round-2`, ...); the states it is sent back are recorded.
 * - `ask_sampling {ask}`: answers `input_required` with a sampling (`ask: "sampling"`) or roots (`"roots"`) request.
 *
 * Run as a program it serves stdio: `node dist/testing/mcp-modern-server.js`.
 */

/** What the server saw, for assertions. */
export interface ModernServerCounters {
  /** The era each request was served in (one server instance per request over HTTP, per connection over stdio). */
  eras: ProtocolEra[];
  /** Calls per tool, each round of a multi round-trip call counted. */
  calls: Record<string, number>;
  /** The `requestState` each call of `ask_forever` was sent back with (`undefined` for a first call). */
  requestStates: (string | undefined)[];
}

const nameForm = z.object({ name: z.string().describe('Your name') });
const moreForm = z.object({ answer: z.string().describe('Anything else') });

function createModernServer(era: ProtocolEra, counters: ModernServerCounters): McpServer {
  counters.eras.push(era);
  const count = (tool: string) => (counters.calls[tool] = (counters.calls[tool] ?? 0) + 1);
  const server = new McpServer({ name: 'durable-agent-modern-test-server', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Returns the text.', inputSchema: z.object({ text: z.string() }) },
    ({ text }): CallToolResult => {
      count('echo');
      return { content: [{ type: 'text', text }] };
    },
  );
  server.registerTool(
    'ask_name',
    {
      description: 'Asks the person for their name (input_required) and greets them.',
      inputSchema: z.object({ message: z.string().default('What is your name?') }),
    },
    ({ message }, context): CallToolResult | InputRequiredResult => {
      count('ask_name');
      const answer = inputResponse(context.mcpReq.inputResponses, 'name');
      if (answer.kind === 'elicit' && answer.action !== 'accept') {
        return { content: [{ type: 'text', text: `No name: ${answer.action}` }] };
      }
      const given = acceptedContent(context.mcpReq.inputResponses, 'name', nameForm);
      if (given === undefined) {
        return inputRequired({ inputRequests: { name: inputRequired.elicit({ message, requestedSchema: nameForm }) } });
      }
      return { content: [{ type: 'text', text: `Hello, ${given.name}` }] };
    },
  );
  server.registerTool(
    'ask_forever',
    { description: 'Asks the person again every time it is called.', inputSchema: z.object({}) },
    (_arguments, context): InputRequiredResult => {
      count('ask_forever');
      const state = context.mcpReq.requestState<string>();
      counters.requestStates.push(state);
      const round = state === undefined ? 1 : Number(state.replace('round-', '')) + 1;
      return inputRequired({
        inputRequests: {
          more: inputRequired.elicit({ message: `Round ${round}: anything else?`, requestedSchema: moreForm }),
        },
        requestState: `round-${round}`,
      });
    },
  );
  server.registerTool(
    'ask_sampling',
    {
      description: 'Asks the client for a model call (sampling) or its roots, both deprecated by 2026-07-28.',
      inputSchema: z.object({ ask: z.enum(['sampling', 'roots']) }),
    },
    ({ ask }): InputRequiredResult => {
      count('ask_sampling');
      const request =
        ask === 'roots'
          ? inputRequired.listRoots()
          : inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'Summarise.' } }],
              maxTokens: 10,
            });
      return inputRequired({ inputRequests: { [ask]: request } });
    },
  );
  server.registerTool(
    'add_tool',
    {
      description: 'Adds an echo tool by that name (the server tells subscribed clients its list changed).',
      inputSchema: z.object({ name: z.string() }),
    },
    ({ name }): CallToolResult => {
      count('add_tool');
      server.registerTool(
        name,
        { description: 'Returns the text.', inputSchema: z.object({ text: z.string() }) },
        ({ text }) => ({
          content: [{ type: 'text', text }],
        }),
      );
      return { content: [{ type: 'text', text: `added ${name}` }] };
    },
  );
  return server;
}

export interface RunningModernServer {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:40123/mcp`. */
  url: string;
  counters: ModernServerCounters;
  close(): Promise<void>;
}

export interface ModernServerOptions {
  /**
   * Leave `resultType` out of `complete` results, as servers built on SDKs that set it only on `input_required`
   * answers do (the 2026-07-28 schema requires it). Results are then sent as JSON, not as an event stream. Default: false.
   */
  omitResultType?: boolean;
}

/** Serve the modern test server over Streamable HTTP on a free port of 127.0.0.1, in this process. */
export async function startModernMcpServer(options: ModernServerOptions = {}): Promise<RunningModernServer> {
  const counters: ModernServerCounters = { eras: [], calls: {}, requestStates: [] };
  const handler = createMcpHandler(({ era }) => createModernServer(era, counters), {
    ...(options.omitResultType === true && { responseMode: 'json' }),
  });
  const serve = async (request: Request): Promise<Response> => {
    const response = await handler.fetch(request);
    return options.omitResultType === true ? withoutCompleteResultType(response) : response;
  };
  // Node's own Request and Response stay global (src/node/http-server.ts says why): tests run clients beside it.
  const http = createServer(getRequestListener(serve, { overrideGlobalObjects: false }));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    counters,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await handler.close();
    },
  };
}

async function withoutCompleteResultType(response: Response): Promise<Response> {
  if (!(response.headers.get('content-type') ?? '').startsWith('application/json')) return response;
  const message = (await response.json()) as { result?: { resultType?: string } };
  if (message.result?.resultType === 'complete') delete message.result.resultType;
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  return new Response(JSON.stringify(message), { status: response.status, headers });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  serveStdio(({ era }) => createModernServer(era, { eras: [], calls: {}, requestStates: [] }));
}
