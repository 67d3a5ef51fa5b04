import {
  type CallToolResult,
  inputRequired,
  inputResponse,
  type InputRequiredResult,
  McpServer,
  type ProtocolEra,
  ProtocolError,
  ProtocolErrorCode,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { TestServerRecorder } from './mcp-test-server-events.js';

/**
 * The tools of the MCP test server (./mcp-test-server.ts): one server instance per era it serves, over state that all
 * instances of one served server share.
 */

/** A 1×1 transparent PNG, for content-conversion tests. */
const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

const failInput = z.object({ message: z.string().default('failed') });

/** The fields the `ask_user` tool asks for. */
export const ASK_USER_SCHEMA = {
  type: 'object' as const,
  properties: {
    name: { type: 'string' as const, title: 'Name', minLength: 1 },
    age: { type: 'integer' as const, minimum: 0 },
  },
  required: ['name'],
};

/** What every instance of one served server shares: over HTTP at 2026-07-28 each request has its own instance. */
export interface SharedState {
  recorder: TestServerRecorder;
  /** The values of 2026-07-28 clients (a 2025-11-25 session has its own). */
  values: Map<string, string>;
  increments: Map<string, number>;
  /** Tools `add_tool` added, registered on every instance made afterwards. */
  addedTools: string[];
  /** What the `crash` tool does: exit the process (stdio) or drop every connection and session (in-process HTTP). */
  crash: () => void;
  /** Tells 2026-07-28 clients that listen over HTTP that the tool list changed (an instance there lives one request). */
  toolsChanged?: () => void;
}

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

/** The text `ask_user` returns for an answer: its action, and its content when there is some. */
function answerText(answer: { action: string; content?: Record<string, unknown> }): CallToolResult {
  return text(answer.content === undefined ? answer.action : `${answer.action} ${JSON.stringify(answer.content)}`);
}

function registerEcho(server: McpServer, name: string, recorder: TestServerRecorder): void {
  server.registerTool(
    name,
    { description: `Added at runtime: echoes.`, inputSchema: z.object({ text: z.string() }) },
    async (args) => {
      recorder.call(name);
      return text(args.text);
    },
  );
}

/**
 * One server instance for the era it serves. An instance answers `server/discover` only when a serving entry
 * (`serveStdio`, `createMcpHandler`) installs that, so one connected by hand speaks 2025-11-25 only.
 */
export function createTestServer(shared: SharedState, era: ProtocolEra): McpServer {
  const { recorder } = shared;
  // A 2025-11-25 session keeps values of its own; at 2026-07-28 there is no session, so they are the server's.
  const { values, increments } =
    era === 'legacy' ? { values: new Map<string, string>(), increments: new Map<string, number>() } : shared;
  const server = new McpServer({ name: 'durable-agent-test', version: '1.0.0' });
  const readOnly = { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false };

  server.registerTool(
    'echo',
    {
      description: 'Returns the text it is given.',
      inputSchema: z.object({ text: z.string() }),
      annotations: readOnly,
    },
    async ({ text: value }) => {
      recorder.call('echo');
      return text(value);
    },
  );
  server.registerTool(
    'set_value',
    {
      description: 'Stores a value under a key (idempotent: setting the same value twice changes nothing).',
      inputSchema: z.object({ key: z.string(), value: z.string() }),
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
      inputSchema: z.object({ key: z.string().default('default') }),
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
    { description: 'Returns an error result (isError: true).', inputSchema: failInput },
    async ({ message }) => {
      recorder.call('fail');
      return { content: [{ type: 'text', text: message }], isError: true };
    },
  );
  server.registerTool(
    'slow',
    {
      description: 'Answers after delayMs.',
      inputSchema: z.object({ delayMs: z.number().int().min(0) }),
      annotations: readOnly,
    },
    async ({ delayMs }, context) => {
      recorder.call('slow');
      await wait(delayMs, context.mcpReq.signal, () => recorder.cancelled('slow'));
      return text(`slept ${delayMs} ms`);
    },
  );
  server.registerTool(
    'hang',
    { description: 'Never answers; records when its cancellation arrives.', inputSchema: z.object({}) },
    async (_arguments, context) => {
      recorder.call('hang');
      await wait(Infinity, context.mcpReq.signal, () => recorder.cancelled('hang'));
      return text('unreachable');
    },
  );
  server.registerTool(
    'crash',
    { description: 'Kills the server in the middle of the call.', inputSchema: z.object({}) },
    async () => {
      recorder.call('crash');
      shared.crash();
      return new Promise<never>(() => undefined);
    },
  );
  server.registerTool(
    'counters',
    {
      description: 'Calls, sessions and cancellations counted by this server.',
      inputSchema: z.object({}),
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
      inputSchema: z.object({ chars: z.number().int().min(0), unit: z.string().min(1).default('0123456789') }),
      annotations: readOnly,
    },
    async ({ chars, unit }) => {
      recorder.call('big');
      return text(unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars));
    },
  );
  server.registerTool(
    'mixed_content',
    { description: 'Returns one block of every content type.', inputSchema: z.object({}), annotations: readOnly },
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
      description: 'Adds an echo tool with the given name at runtime (the server tells the client its list changed).',
      inputSchema: z.object({ name: z.string() }),
    },
    async ({ name }) => {
      recorder.call('add_tool');
      shared.addedTools.push(name);
      // An HTTP instance at 2026-07-28 ends with this request: the handler tells the listening clients instead.
      if (shared.toolsChanged !== undefined && era === 'modern') shared.toolsChanged();
      else registerEcho(server, name, recorder);
      return text(`added ${name}`);
    },
  );
  for (const name of shared.addedTools) registerEcho(server, name, recorder);
  server.registerTool(
    'progress',
    {
      description: 'Reports `steps` progress notifications, `delayMs` apart.',
      inputSchema: z.object({ steps: z.number().int().min(1), delayMs: z.number().int().min(0) }),
      annotations: readOnly,
    },
    async ({ steps, delayMs }, context) => {
      recorder.call('progress');
      const progressToken = context.mcpReq._meta?.progressToken;
      for (let step = 1; step <= steps; step += 1) {
        await wait(delayMs, context.mcpReq.signal, () => recorder.cancelled('progress'));
        if (progressToken !== undefined) {
          await context.mcpReq.notify({
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
      inputSchema: z.object({ message: z.string().default('Who are you?') }),
      annotations: readOnly,
    },
    async ({ message }, context): Promise<CallToolResult | InputRequiredResult> => {
      recorder.call('ask_user');
      if (era === 'modern') {
        // 2026-07-28 has no server-pushed request: the question is the call's answer, and the call comes back with it.
        const answer = inputResponse(context.mcpReq.inputResponses, 'person');
        if (answer.kind === 'elicit') return answerText(answer);
        return inputRequired({
          inputRequests: { person: inputRequired.elicit({ message, requestedSchema: ASK_USER_SCHEMA }) },
        });
      }
      const answer = await context.mcpReq.elicitInput(
        { mode: 'form', message, requestedSchema: ASK_USER_SCHEMA },
        // The person may take long: the client bounds the wait (its elicitationTimeoutMs), not this server.
        { timeout: 24 * 60 * 60 * 1000, signal: context.mcpReq.signal },
      );
      return answerText(answer);
    },
  );
  server.registerTool(
    'protocol_error',
    {
      description: 'Answers with a JSON-RPC error instead of a result.',
      inputSchema: z.object({}),
      annotations: readOnly,
    },
    async () => text('unreachable: answered below the McpServer layer'),
  );
  answerWithProtocolError(server, 'protocol_error', recorder);
  return server;
}

type RequestHandler = (request: { params?: { name?: unknown } }, ...rest: unknown[]) => Promise<unknown>;

/**
 * McpServer turns every error a tool throws into an `isError` result, so a JSON-RPC error answer (what a server
 * written against the low-level API may send) has to be produced one layer down, by wrapping the `tools/call` handler.
 */
function answerWithProtocolError(server: McpServer, toolName: string, recorder: TestServerRecorder): void {
  const handlers = (server.server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers;
  const callTool = handlers.get('tools/call');
  if (callTool === undefined) throw new Error('McpServer has no tools/call handler yet');
  handlers.set('tools/call', async (request, ...rest) => {
    if (request.params?.name !== toolName) return callTool(request, ...rest);
    recorder.call(toolName);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${toolName} always answers with a JSON-RPC error`);
  });
}

/** The state of a newly started server; `crash` is what its `crash` tool does. */
export function sharedState(crash: () => void): SharedState {
  return { recorder: new TestServerRecorder(), values: new Map(), increments: new Map(), addedTools: [], crash };
}
