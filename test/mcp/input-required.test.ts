import { afterEach, describe, expect, test } from 'vitest';
import { isInputRequiredResult } from '@modelcontextprotocol/client';
import { readInputRequired } from '../../src/worker/mcp/input-required.js';
import { startModernMcpServer, type RunningModernServer } from '../../src/testing/mcp-modern-server.js';
import { httpServer, mcpTool, resultText, usePools } from './helpers.js';

/**
 * A 2026-07-28 server's `input_required` answer, as the pool hands it to a caller that answers questions itself (the
 * workflow), and how the activity reads it: elicitations become questions; sampling and roots are refused.
 */

const createPool = usePools();
let modern: RunningModernServer | undefined;
afterEach(async () => {
  await modern?.close();
  modern = undefined;
});

describe('input_required handed back to the caller', () => {
  test('with rounds the pool returns the questions; sent again with the answer, the server answers the call', async () => {
    modern = await startModernMcpServer();
    const pool = createPool([httpServer('modern', modern.url)]);
    const target = mcpTool('modern', 'ask_name');
    const first = await pool.callTool(target, { message: 'Who?' }, { rounds: {} });
    if (!isInputRequiredResult(first)) throw new Error(`expected input_required, got ${JSON.stringify(first)}`);
    const reading = readInputRequired(first);
    expect(reading).toEqual({
      kind: 'questions',
      questions: [
        expect.objectContaining({ key: 'name', mode: 'form', message: 'Who?', requestedSchema: expect.any(Object) }),
      ],
    });
    const answered = await pool.callTool(
      target,
      { message: 'Who?' },
      { rounds: { inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } } },
    );
    expect(resultText(answered as Parameters<typeof resultText>[0])).toBe('Hello, Ada');
    expect(modern.counters.calls).toEqual({ ask_name: 2 });
  });

  test('the requestState a server sends is sent back verbatim', async () => {
    modern = await startModernMcpServer();
    const pool = createPool([httpServer('modern', modern.url)]);
    const first = await pool.callTool(mcpTool('modern', 'ask_forever'), {}, { rounds: {} });
    expect(first).toMatchObject({ resultType: 'input_required', requestState: 'round-1' });
    await pool.callTool(
      mcpTool('modern', 'ask_forever'),
      {},
      { rounds: { inputResponses: { more: { action: 'decline' } }, requestState: 'round-1' } },
    );
    expect(modern.counters.requestStates).toEqual([undefined, 'round-1']);
  });
});

describe('readInputRequired', () => {
  test.each([
    ['sampling/createMessage', 'sampling (a model call made for the server)'],
    ['roots/list', "roots (the client's file-system roots)"],
  ])('%s is refused, naming what was asked and why', (method, what) => {
    const reading = readInputRequired({
      resultType: 'input_required',
      inputRequests: {
        name: {
          method: 'elicitation/create',
          params: { mode: 'form', message: 'Who?', requestedSchema: { type: 'object', properties: {} } },
        },
        other: { method, params: {} } as never,
      },
    });
    expect(reading).toEqual({
      kind: 'refused',
      reason: `the server asked for ${what} (input request "other"), which durable-agent does not offer: the 2026-07-28 revision deprecates it, so the call was not sent again`,
    });
  });

  test('an unknown method is refused as not MCP', () => {
    const reading = readInputRequired({
      resultType: 'input_required',
      inputRequests: { x: { method: 'tasks/get' } as never },
    });
    expect(reading).toMatchObject({ kind: 'refused', reason: expect.stringContaining('"tasks/get"') });
  });
});
