import type { McpServerConfig } from '../../src/worker/mcp/config.js';
import { McpPool } from '../../src/worker/mcp/pool.js';
import type { WorkClock } from '../harness.js';

/** The stdio MCP test server as a pool configuration: one server, `bench`, whose `echo` tool is the workload's. */
export function benchMcpServer(script: string): McpServerConfig {
  return {
    name: 'bench',
    transport: 'stdio',
    command: process.execPath,
    args: [script],
    env: {},
    cwd: undefined,
    allowTools: ['echo'],
    denyTools: [],
    timeoutMs: 60_000,
    disabled: false,
  };
}

/** The pool with every call timed on `clock`, under the key `keyOf()` returns at the time of the call. */
export function timedPool(
  pool: McpPool,
  clock: WorkClock,
  keyOf: () => string | undefined,
): Pick<McpPool, 'listTools' | 'callTool'> {
  return {
    listTools: () => clock.time(keyOf(), () => pool.listTools()),
    callTool: (target, args, options) => clock.time(keyOf(), () => pool.callTool(target, args, options)),
  };
}
