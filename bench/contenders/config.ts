/**
 * How the benchmark starts a contender: `node <script> serve '<ContenderConfig JSON>'` (a child with IPC), or
 * `node <script> replay '<ReplayConfig JSON>'` (a fresh process that bundles and replays one history, then exits).
 */

export interface ContenderConfig {
  /** host:port of the Temporal dev server. */
  address: string;
  namespace: string;
  /** The scripted model's base URL (`http://127.0.0.1:N/v1`). */
  modelBaseUrl: string;
  /** The stdio MCP test server (`mcp-test-server.js`), run with this Node. */
  mcpServerScript: string;
  /** A task queue of this contender's own. */
  taskQueue: string;
}

export interface ReplayConfig {
  address: string;
  namespace: string;
  workflowId: string;
  runId: string;
}

export type ContenderArguments = { mode: 'serve'; config: ContenderConfig } | { mode: 'replay'; config: ReplayConfig };

export function parseContenderArguments(argv: string[]): ContenderArguments {
  const [mode, json] = argv;
  if ((mode !== 'serve' && mode !== 'replay') || json === undefined) {
    throw new Error(
      `usage: <contender> serve '<ContenderConfig JSON>' | replay '<ReplayConfig JSON>' (got ${argv.join(' ')})`,
    );
  }
  return mode === 'serve'
    ? { mode, config: JSON.parse(json) as ContenderConfig }
    : { mode, config: JSON.parse(json) as ReplayConfig };
}
