import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach } from 'vitest';
import type { HttpServerConfig, McpServerConfig, StdioServerConfig } from '../../src/worker/mcp/config.js';
import { DEFAULT_TOOL_TIMEOUT_MS } from '../../src/worker/mcp/config.js';
import { McpPool, type McpLogger, type McpPoolOptions, type McpToolTarget } from '../../src/worker/mcp/pool.js';

/** Shared set-up for the MCP tests: real servers, started and always stopped. */

const require = createRequire(import.meta.url);
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The entry script of a published MCP server package, resolved through node_modules. */
export function publishedServerEntry(name: 'server-everything' | 'server-filesystem' | 'server-memory'): string {
  const packageJson = require.resolve(`@modelcontextprotocol/${name}/package.json`);
  return path.join(path.dirname(packageJson), 'dist', 'index.js');
}

/** Our test server, compiled: stdio servers are separate processes, so they run the built JavaScript. */
export function testServerEntry(): string {
  const built = path.join(repositoryRoot, 'dist/testing/mcp-test-server.js');
  const source = path.join(repositoryRoot, 'src/testing/mcp-test-server.ts');
  if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) {
    throw new Error(
      `${built} is missing or older than its source: run "npx tsc -p tsconfig.build.json" (npm test does).`,
    );
  }
  return built;
}

const common = { allowTools: undefined, denyTools: [], timeoutMs: DEFAULT_TOOL_TIMEOUT_MS, disabled: false };

export function stdioServer(
  name: string,
  command: string,
  args: string[],
  extra: Partial<StdioServerConfig> = {},
): StdioServerConfig {
  return { ...common, name, transport: 'stdio', command, args, env: {}, cwd: undefined, ...extra };
}

export function httpServer(name: string, url: string, extra: Partial<HttpServerConfig> = {}): HttpServerConfig {
  return { ...common, name, transport: 'http', url, headers: {}, ...extra };
}

/**
 * The eras our test server can be spoken to in: 2026-07-28 (what the pool negotiates with it over HTTP, and what
 * {@link testServerStdio} pins it to over stdio, where the pool's default is the session), and 2025-11-25 sessions
 * when it is started legacy-only (`--legacy-only`, `legacyOnly: true`), as SDK 1.x servers are.
 */
export const TEST_SERVER_ERAS = [
  { protocolVersion: '2026-07-28', legacyOnly: false },
  { protocolVersion: '2025-11-25', legacyOnly: true },
] as const;

/**
 * Our test server over stdio; `counterFile` receives its events (see countTestServerEvents). Unless legacy-only, it is
 * pinned to 2026-07-28, so the stdio tests cover that era too (a stdio server's default is the 2025-11-25 session).
 */
export function testServerStdio(
  name: string,
  counterFile: string,
  extra: Partial<StdioServerConfig> = {},
  { legacyOnly = false } = {},
) {
  return stdioServer(name, process.execPath, [testServerEntry(), ...(legacyOnly ? ['--legacy-only'] : [])], {
    env: { MCP_TEST_COUNTER_FILE: counterFile },
    ...(legacyOnly ? {} : { protocolVersion: '2026-07-28' as const }),
    ...extra,
  });
}

/** Pools created through this are closed after each test, passing or failing. */
export function usePools(): (servers: McpServerConfig[], options?: McpPoolOptions) => McpPool {
  const pools: McpPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
  });
  return (servers, options) => {
    const quiet = { warn: () => undefined, debug: () => undefined };
    const pool = new McpPool(servers, { onServerStderr: () => undefined, logger: quiet, ...options });
    pools.push(pool);
    return pool;
  };
}

/** A fresh temporary directory per call, removed after the file's tests. */
export function useTemporaryDirectories(): () => string {
  const directories: string[] = [];
  afterAll(() => {
    for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  });
  return () => {
    const directory = mkdtempSync(path.join(tmpdir(), 'durable-agent-mcp-'));
    directories.push(directory);
    return directory;
  };
}

/** Processes started through this are killed after the file's tests. */
export function useProcesses(): (command: string, args: string[], env?: Record<string, string>) => ChildProcess {
  const processes: ChildProcess[] = [];
  afterAll(() => {
    for (const child of processes) if (child.exitCode === null) child.kill('SIGKILL');
  });
  return (command, args, env = {}) => {
    const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    processes.push(child);
    return child;
  };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

/** Poll until `check` returns true (or throw after `timeoutMs`). */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Wait until an HTTP endpoint accepts connections (any status). */
export async function waitForHttp(url: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    async () => {
      try {
        await fetch(url, { method: 'GET' }).then((response) => response.body?.cancel());
        return true;
      } catch {
        return false;
      }
    },
    timeoutMs,
    url,
  );
}

export { isProcessAlive } from '../../src/temporal-servers/processes.js';

/** A tool to call, as the workflow names one: its server and its name there (the pool's `McpToolTarget`). */
export function mcpTool(server: string, originalName: string): McpToolTarget {
  return { server, originalName };
}

/** What `promise` rejects with; fails the test, naming the result, if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (result) => {
      throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
    },
    (error: unknown) => error,
  );
}

/** The text of the content blocks of a raw MCP result. */
export function resultText(result: { content?: Array<{ type: string; text?: string }> }): string {
  return (result.content ?? []).map((block) => block.text ?? `[${block.type}]`).join('\n');
}

export interface Gate {
  /** The gate's endpoint: same path as the target's. */
  url: string;
  /**
   * Answer every request with this HTTP status, or pass them on. The body is `body` if given (a server's own error
   * text), else the request's headers echoed.
   */
  reject(status: number | undefined, body?: string): void;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of an MCP server that can be told to refuse every request, as a server does when our
 * credentials are wrong or revoked. Its refusals echo the request's headers, as some servers' error pages do, so a
 * test can check that what the pool reports never carries them.
 */
export async function startGate(target: string, rejecting?: number): Promise<Gate> {
  const upstream = new URL(target);
  let status = rejecting;
  let errorBody: string | undefined;
  const server = createHttpServer((request, response) => {
    if (status !== undefined) {
      request.resume();
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(errorBody ?? JSON.stringify({ error: 'refused', yourHeaders: request.headers }));
      return;
    }
    const proxied = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        path: request.url,
        method: request.method,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    proxied.on('error', () => response.destroy());
    request.pipe(proxied);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}${upstream.search}`,
    reject: (next, body) => {
      status = next;
      errorBody = body;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A logger that keeps every line, by level. */
export function recordingLogger(): { warn: string[]; info: string[]; debug: string[]; logger: Required<McpLogger> } {
  const lines = { warn: [] as string[], info: [] as string[], debug: [] as string[] };
  return {
    ...lines,
    logger: {
      warn: (message) => lines.warn.push(message),
      info: (message) => lines.info.push(message),
      debug: (message) => lines.debug.push(message),
    },
  };
}
