import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from 'vitest';
import type { ElicitationRequest } from '../../src/worker/mcp/elicitation.js';
import { pythonEnvironment } from '../helpers/python.js';
import {
  freePort,
  httpServer,
  mcpTool,
  rejectionOf,
  resultText,
  stdioServer,
  useProcesses,
  usePools,
  useTemporaryDirectories,
  waitForHttp,
} from './helpers.js';

/**
 * A stdio server written with the official Python MCP SDK (`mcp` pinned in test/fixtures/python-mcp/requirements.txt),
 * asking the person the way that SDK documents: `ctx.elicit(...)`, a request while the call runs. The SDK also offers
 * 2026-07-28, where it has no way to send a request, so its question only reaches the person in a 2025-11-25 session:
 * the era the pool chooses for stdio servers unless `protocolVersion` pins another. An HTTP server is probed, and is heard
 * when its operator pins 2025-11-25.
 */

const fixtures = fileURLToPath(new URL('../fixtures/python-mcp/', import.meta.url));
const server = path.join(fixtures, 'ask_server.py');

const createPool = usePools();
const temporaryDirectory = useTemporaryDirectories();
const startProcess = useProcesses();
let python: string;

beforeAll(async () => {
  python = await pythonEnvironment(
    path.join(fixtures, 'requirements.txt'),
    'test/fixtures/python-mcp (servers built on the Python MCP SDK)',
  );
}, 300_000);

function pythonServer(extra: Parameters<typeof stdioServer>[3] = {}) {
  const log = path.join(temporaryDirectory(), 'calls.jsonl');
  return { config: stdioServer('py', python, [server], { env: { ASK_SERVER_LOG: log }, ...extra }), log };
}

function calls(log: string): unknown[] {
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

describe('a server built on the Python MCP SDK, asking with ctx.elicit', () => {
  test('without configuration its question reaches the person and the answer reaches the server', async () => {
    const { config, log } = pythonServer();
    const pool = createPool([config]);
    const asked: ElicitationRequest[] = [];
    const result = await pool.callTool(
      mcpTool('py', 'confirm_order'),
      { order: '981' },
      {
        onElicitation: (request) => {
          asked.push(request);
          return Promise.resolve({ action: 'accept', content: { approve: true, note: 'by noon' } });
        },
      },
    );

    expect(resultText(result)).toBe('Order 981 placed (by noon)');
    expect(asked).toEqual([
      expect.objectContaining({
        mode: 'form',
        message: 'Place order 981?',
        requestedSchema: expect.objectContaining({
          properties: expect.objectContaining({ approve: expect.objectContaining({ type: 'boolean' }) }),
        }),
      }),
    ]);
    expect(calls(log)).toEqual([{ called: '981' }, { answered: 'accept' }]);
    // The SDK offers 2026-07-28 too; the pool speaks the session era to it, where a server may ask by request.
    expect(pool.status()[0]).toMatchObject({ protocolVersion: '2025-11-25', connects: 1 });
  });

  test('pinned to 2026-07-28 the SDK cannot ask: the server refuses its own question (why stdio defaults to 2025-11-25)', async () => {
    const { config } = pythonServer({ protocolVersion: '2026-07-28' });
    const pool = createPool([config]);
    let asked = 0;
    const failure = await rejectionOf(
      pool.callTool(
        mcpTool('py', 'confirm_order'),
        { order: '982' },
        {
          onElicitation: () => {
            asked += 1;
            return Promise.resolve({ action: 'decline' });
          },
        },
      ),
    );
    expect(String(failure)).toMatch(/no back-channel for server-initiated requests/);
    expect(asked).toBe(0);
    expect(pool.status()[0]).toMatchObject({ protocolVersion: '2026-07-28' });
  });

  test('over Streamable HTTP it is probed and gets 2026-07-28, where it cannot ask; pinned to 2025-11-25 it is heard', async () => {
    const port = await freePort();
    startProcess(python, [server, 'streamable-http', String(port)]);
    const url = `http://127.0.0.1:${port}/mcp`;
    await waitForHttp(url, 60_000);
    const pool = createPool([httpServer('probed', url), httpServer('pinned', url, { protocolVersion: '2025-11-25' })]);
    const answer = { onElicitation: () => Promise.resolve({ action: 'accept' as const, content: { approve: false } }) };

    const refused = await rejectionOf(pool.callTool(mcpTool('probed', 'confirm_order'), { order: '983' }, answer));
    expect(String(refused)).toMatch(/no back-channel for server-initiated requests/);
    const heard = await pool.callTool(mcpTool('pinned', 'confirm_order'), { order: '984' }, answer);
    expect(resultText(heard)).toBe('Order 984 not placed (no note)');
    expect(pool.status().map((status) => status.protocolVersion)).toEqual(['2026-07-28', '2025-11-25']);
  });
});
