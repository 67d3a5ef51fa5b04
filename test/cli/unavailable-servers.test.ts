import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMcpConfig } from '../../src/worker/mcp/config.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import type { TurnResult } from '../../src/workflows/definitions.js';
import { type CliAgent, startCliAgent } from './cli-agent.js';

/**
 * A server left out of a turn is named by a plain `ask` too, on stderr, not only by `--json` (the TurnResult's
 * `unavailableServers`), the stream and the worker's log: an answer given without a server's tools says why.
 */

let cliAgent: CliAgent;

beforeAll(async () => {
  const broken = parseMcpConfig(
    JSON.stringify({
      mcpServers: {
        warehouse: {
          command: process.execPath,
          args: ['-e', 'console.error("no database at db:5432"); process.exit(1)'],
        },
      },
    }),
    'mcp.json',
    {},
  ).servers;
  cliAgent = await startCliAgent({
    script: [{ content: 'I cannot see the stock right now.' }, { content: 'Still no stock figures.' }],
    mcpServers: broken,
  });
});

afterAll(async () => {
  await cliAgent?.close();
});

describe('ask with an MCP server left out of the turn', () => {
  it('plain ask prints the answer on stdout and names the server and why on stderr; --json keeps it in the result', async () => {
    const id = `unavailable-${randomUUID()}`;
    const plain = await cliAgent.cli('ask', '-c', id, 'How many chairs are in stock?');
    expect(plain.code).toBe(ExitCode.Ok);
    expect(plain.stdout).toBe('I cannot see the stock right now.\n');
    expect(plain.stderr).toMatch(
      /^MCP server warehouse is unavailable this turn \(its tools are left out\): .*no database at db:5432/m,
    );

    const json = await cliAgent.cli('ask', '-c', id, '--json', 'And now?');
    const result = JSON.parse(json.stdout) as TurnResult;
    expect(result.unavailableServers).toEqual([
      { server: 'warehouse', reason: expect.stringContaining('no database at db:5432') },
    ]);
    expect(json.stderr).not.toContain('warehouse');
  });
});
