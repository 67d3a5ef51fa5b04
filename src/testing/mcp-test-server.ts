import { appendFileSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { serveMcpOverHttp, type ServeMcpOptions, type ServedMcp } from './mcp-http.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { errorMessage } from '../shared/errors.js';

/**
 * A small MCP server for tests: it counts calls, fails, hangs until cancelled, crashes, and changes its tool list.
 *
 *   node dist/testing/mcp-test-server.js                 # stdio
 *   node dist/testing/mcp-test-server.js --http --port N # Streamable HTTP at http://127.0.0.1:N/mcp
 *
 * or in-process over HTTP with {@link startTestMcpServer}. With `MCP_TEST_COUNTER_FILE` set, every process start,
 * session, call and cancellation is appended to that file as a JSON line, so a test can count what happened in a
 * server process it does not share memory with (see {@link countTestServerEvents}).
 */

export interface TestServerCounters {
  /** MCP sessions initialised (one per connection: a stdio process has one). */
  sessions: number;
  /** Calls per tool name, counted when the call starts. */
  calls: Record<string, number>;
  /** Calls per tool name whose cancellation (`notifications/cancelled`) reached the tool. */
  cancellations: Record<string, number>;
}

export interface TestServerEvent {
  event: 'start' | 'session' | 'call' | 'cancelled';
  tool?: string;
  pid: number;
}

/** A 1×1 transparent PNG, for content-conversion tests. */
const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

class Recorder {
  readonly counters: TestServerCounters = { sessions: 0, calls: {}, cancellations: {} };
  constructor(private readonly file = process.env.MCP_TEST_COUNTER_FILE) {
    this.write({ event: 'start', pid: process.pid });
  }

  session(): void {
    this.counters.sessions += 1;
    this.write({ event: 'session', pid: process.pid });
  }

  call(tool: string): void {
    this.counters.calls[tool] = (this.counters.calls[tool] ?? 0) + 1;
    this.write({ event: 'call', tool, pid: process.pid });
  }

  cancelled(tool: string): void {
    this.counters.cancellations[tool] = (this.counters.cancellations[tool] ?? 0) + 1;
    this.write({ event: 'cancelled', tool, pid: process.pid });
  }

  private write(event: TestServerEvent): void {
    // Appends of one short line are atomic, so several server processes can share the file.
    if (this.file !== undefined) appendFileSync(this.file, `${JSON.stringify(event)}\n`);
  }
}

/** The fields the `ask_user` tool asks for. */
export const ASK_USER_SCHEMA = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, title: 'Name', minLength: 1 },
    age: { type: 'integer' as const, minimum: 0 },
  },
  required: ['name'],
};

/** What the `crash` tool does: exit the process (stdio) or drop every connection and session (in-process HTTP). */
type Crash = () => void;

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

/** Resolves after `ms`, or when `signal` aborts (then records the cancellation and rejects). */
function wait(ms: number, signal: AbortSignal, onCancelled: () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = ms === Infinity ? undefined : setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        onCancelled();
        reject(new Error('cancelled'));
      },
      { once: true },
    );
  });
}

function createTestServer(recorder: Recorder, crash: Crash): McpServer {
  const server = new McpServer({ name: 'durable-agent-test', version: '1.0.0' });
  const values = new Map<string, string>();
  const increments = new Map<string, number>();
  const readOnly = { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false };

  server.registerTool(
    'echo',
    { description: 'Returns the text it is given.', inputSchema: { text: z.string() }, annotations: readOnly },
    async ({ text: value }) => {
      recorder.call('echo');
      return text(value);
    },
  );
  server.registerTool(
    'set_value',
    {
      description: 'Stores a value under a key (idempotent: setting the same value twice changes nothing).',
      inputSchema: { key: z.string(), value: z.string() },
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
    },
    async ({ key, value }) => {
      recorder.call('set_value');
      values.set(key, value);
      return text(`${key} = ${value}`);
    },
  );
  server.registerTool(
    'increment',
    {
      description: 'Adds one to a counter and returns it: a side effect that must not run twice.',
      inputSchema: { key: z.string().default('default') },
    },
    async ({ key }) => {
      recorder.call('increment');
      const value = (increments.get(key) ?? 0) + 1;
      increments.set(key, value);
      return text(`${key} = ${value}`);
    },
  );
  server.registerTool(
    'fail',
    { description: 'Returns an error result (isError: true).', inputSchema: { message: z.string().default('failed') } },
    async ({ message }) => {
      recorder.call('fail');
      return { content: [{ type: 'text', text: message }], isError: true };
    },
  );
  server.registerTool(
    'slow',
    { description: 'Answers after delayMs.', inputSchema: { delayMs: z.number().int().min(0) }, annotations: readOnly },
    async ({ delayMs }, extra) => {
      recorder.call('slow');
      await wait(delayMs, extra.signal, () => recorder.cancelled('slow'));
      return text(`slept ${delayMs} ms`);
    },
  );
  server.registerTool(
    'hang',
    { description: 'Never answers; records when its cancellation arrives.', inputSchema: {} },
    async (_args, extra) => {
      recorder.call('hang');
      await wait(Infinity, extra.signal, () => recorder.cancelled('hang'));
      return text('unreachable');
    },
  );
  server.registerTool(
    'crash',
    { description: 'Kills the server in the middle of the call.', inputSchema: {} },
    async () => {
      recorder.call('crash');
      crash();
      return new Promise<never>(() => undefined);
    },
  );
  server.registerTool(
    'counters',
    {
      description: 'Calls, sessions and cancellations counted by this server.',
      inputSchema: {},
      annotations: readOnly,
    },
    async () => {
      recorder.call('counters');
      return {
        content: [{ type: 'text', text: JSON.stringify(recorder.counters) }],
        structuredContent: { ...recorder.counters },
      };
    },
  );
  server.registerTool(
    'big',
    {
      description: 'Returns `chars` characters of text: `unit` (default the digits) repeated.',
      inputSchema: { chars: z.number().int().min(0), unit: z.string().min(1).default('0123456789') },
      annotations: readOnly,
    },
    async ({ chars, unit }) => {
      recorder.call('big');
      return text(unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars));
    },
  );
  server.registerTool(
    'mixed_content',
    { description: 'Returns one block of every content type.', inputSchema: {}, annotations: readOnly },
    async () => {
      recorder.call('mixed_content');
      return {
        content: [
          { type: 'text', text: 'Here is everything:' },
          { type: 'image', data: TINY_PNG, mimeType: 'image/png' },
          { type: 'audio', data: Buffer.alloc(3000).toString('base64'), mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'test://notes/1', mimeType: 'text/plain', text: 'note one' } },
          { type: 'resource', resource: { uri: 'test://blobs/1', mimeType: 'application/octet-stream', blob: 'AAEC' } },
          { type: 'resource_link', uri: 'test://files/report.pdf', name: 'report', mimeType: 'application/pdf' },
        ],
        structuredContent: { total: 3, unit: 'items' },
      };
    },
  );
  server.registerTool(
    'add_tool',
    {
      description: 'Adds an echo tool with the given name at runtime (the server sends tools/list_changed).',
      inputSchema: { name: z.string() },
    },
    async ({ name }) => {
      recorder.call('add_tool');
      server.registerTool(
        name,
        { description: `Added at runtime: echoes.`, inputSchema: { text: z.string() } },
        async (args) => {
          recorder.call(name);
          return text(args.text);
        },
      );
      return text(`added ${name}`);
    },
  );
  server.registerTool(
    'progress',
    {
      description: 'Reports `steps` progress notifications, `delayMs` apart.',
      inputSchema: { steps: z.number().int().min(1), delayMs: z.number().int().min(0) },
      annotations: readOnly,
    },
    async ({ steps, delayMs }, extra) => {
      recorder.call('progress');
      const progressToken = extra._meta?.progressToken;
      for (let step = 1; step <= steps; step += 1) {
        await wait(delayMs, extra.signal, () => recorder.cancelled('progress'));
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: steps, message: `step ${step}` },
          });
        }
      }
      return text(`done ${steps} steps`);
    },
  );
  server.registerTool(
    'ask_user',
    {
      description:
        "Asks the person for a name and an age (MCP elicitation) and returns the answer's action and content.",
      inputSchema: { message: z.string().default('Who are you?') },
      annotations: readOnly,
    },
    async ({ message }, extra) => {
      recorder.call('ask_user');
      const answer = await server.server.elicitInput(
        { mode: 'form', message, requestedSchema: ASK_USER_SCHEMA },
        // The person may take long: the client bounds the wait (its elicitationTimeoutMs), not this server.
        { relatedRequestId: extra.requestId, timeout: 24 * 60 * 60 * 1000, signal: extra.signal },
      );
      return text(answer.content === undefined ? answer.action : `${answer.action} ${JSON.stringify(answer.content)}`);
    },
  );
  server.registerTool(
    'protocol_error',
    { description: 'Answers with a JSON-RPC error instead of a result.', inputSchema: {}, annotations: readOnly },
    async () => text('unreachable: answered below the McpServer layer'),
  );
  answerWithProtocolError(server, 'protocol_error', recorder);
  return server;
}

type RequestHandler = (request: { params?: { name?: unknown } }, extra: unknown) => Promise<unknown>;

/**
 * McpServer turns every error a tool throws into an `isError` result, so a JSON-RPC error answer (what a server
 * written against the low-level API may send) has to be produced one layer down, by wrapping the `tools/call` handler.
 */
function answerWithProtocolError(server: McpServer, toolName: string, recorder: Recorder): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers;
  const callTool = handlers.get('tools/call');
  if (callTool === undefined) throw new Error('McpServer has no tools/call handler yet');
  handlers.set('tools/call', async (request, extra) => {
    if (request.params?.name !== toolName) return callTool(request, extra);
    recorder.call(toolName);
    throw new McpError(ErrorCode.InvalidParams, `${toolName} always answers with a JSON-RPC error`);
  });
}

export interface StartTestMcpServerOptions {
  transport: 'http';
  /** TCP port; default 0 (any free port). */
  port?: number;
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** Runs before the MCP endpoint, e.g. an authorization check (see `ServeMcpOptions.middleware`). */
  middleware?: ServeMcpOptions['middleware'];
}

export interface RunningTestMcpServer {
  /** The Streamable HTTP endpoint, e.g. `http://127.0.0.1:40123/mcp`. */
  url: string;
  port: number;
  /** Live counters of this server (all sessions). */
  counters: TestServerCounters;
  /** Sessions currently open (a client that closes cleanly ends its session with a DELETE). */
  openSessions(): number;
  /** Forget every session, as a restarted server would: the next request on an old session gets 404. */
  forgetSessions(): Promise<void>;
  /** Cut every open HTTP connection (what the `crash` tool does, plus forgetting sessions). */
  dropConnections(): Promise<void>;
  close(): Promise<void>;
}

/** Start the test server over Streamable HTTP in this process (stateful sessions, one McpServer per session). */
export async function startTestMcpServer(options: StartTestMcpServerOptions): Promise<RunningTestMcpServer> {
  const recorder = new Recorder();
  const served: ServedMcp = await serveMcpOverHttp(
    () => createTestServer(recorder, () => void served.dropConnections()),
    {
      port: options.port,
      host: options.host,
      onSession: () => recorder.session(),
      middleware: options.middleware,
    },
  );
  return {
    url: served.url,
    port: served.port,
    counters: recorder.counters,
    openSessions: served.sessions,
    forgetSessions: served.forgetSessions,
    dropConnections: served.dropConnections,
    close: served.close,
  };
}

/** The events appended to an `MCP_TEST_COUNTER_FILE` (empty when the file does not exist yet). */
export function readTestServerEvents(file: string): TestServerEvent[] {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return content
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TestServerEvent);
}

/** Totals over every server process that wrote to `file`; `processes` counts process starts. */
export function countTestServerEvents(file: string): TestServerCounters & { processes: number } {
  const totals = {
    processes: 0,
    sessions: 0,
    calls: {} as Record<string, number>,
    cancellations: {} as Record<string, number>,
  };
  for (const { event, tool } of readTestServerEvents(file)) {
    if (event === 'start') totals.processes += 1;
    else if (event === 'session') totals.sessions += 1;
    else if (event === 'call' && tool !== undefined) totals.calls[tool] = (totals.calls[tool] ?? 0) + 1;
    else if (event === 'cancelled' && tool !== undefined) {
      totals.cancellations[tool] = (totals.cancellations[tool] ?? 0) + 1;
    }
  }
  return totals;
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--http')) {
    const portIndex = argv.indexOf('--port');
    const port = portIndex === -1 ? 0 : Number(argv[portIndex + 1]);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new Error(`--port: expected a TCP port, got ${argv[portIndex + 1]}`);
    const running = await startTestMcpServer({ transport: 'http', port });
    process.stdout.write(`${running.url}\n`);
    const stop = () => void running.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    return;
  }
  const recorder = new Recorder();
  const server = createTestServer(recorder, () => process.exit(1));
  // A stdio server has exactly one session: the process.
  server.server.oninitialized = () => recorder.session();
  await server.connect(new StdioServerTransport());
  // Exit when the client closes stdin, as a well-behaved stdio server does.
  process.stdin.once('end', () => process.exit(0));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`mcp-test-server: ${errorMessage(error)}\n`);
    process.exitCode = 1;
  });
}
