import { describe, expect, it } from 'vitest';
import { type CallInFlight, routeElicitation } from '../../src/worker/mcp/elicitation.js';

/** A server's question goes to the one tool call in flight on its session, or to nobody. */
const params = {
  mode: 'form' as const,
  message: 'Who are you?',
  requestedSchema: { type: 'object' as const, properties: { name: { type: 'string' as const } } },
};

function call(name: string, asked: string[]): CallInFlight {
  return {
    ask: async (request) => {
      asked.push(`${name}: ${request.message}`);
      return { action: 'accept', content: { name } };
    },
  };
}

describe('routeElicitation', () => {
  it('asks the one call in flight and hands its answer to the server', async () => {
    const asked: string[] = [];
    const warnings: string[] = [];
    const result = await routeElicitation(new Set([call('a', asked)]), params, new AbortController().signal, (m) =>
      warnings.push(m),
    );
    expect(result).toEqual({ action: 'accept', content: { name: 'a' } });
    expect(asked).toEqual(['a: Who are you?']);
    expect(warnings).toEqual([]);
  });

  it('with no call or several calls in flight it cannot tell whose question it is: cancel, and a warning', async () => {
    const asked: string[] = [];
    const warnings: string[] = [];
    const warn = (message: string) => warnings.push(message);
    const signal = new AbortController().signal;
    expect(await routeElicitation(new Set(), params, signal, warn)).toEqual({ action: 'cancel' });
    expect(await routeElicitation(new Set([call('a', asked), call('b', asked)]), params, signal, warn)).toEqual({
      action: 'cancel',
    });
    expect(asked).toEqual([]);
    expect(warnings).toEqual([
      'asked a question outside any tool call; answered cancel',
      'asked a question while 2 of its tool calls ran at once on one session, so it cannot tell whose: answered cancel',
    ]);
  });

  it('a failure to ask the person answers cancel', async () => {
    const failing: CallInFlight = { ask: () => Promise.reject(new Error('the workflow is gone')) };
    const warnings: string[] = [];
    const result = await routeElicitation(new Set([failing]), params, new AbortController().signal, (m) =>
      warnings.push(m),
    );
    expect(result).toEqual({ action: 'cancel' });
    expect(warnings).toEqual(['could not ask the person its question (the workflow is gone); answered cancel']);
  });

  it("a form accepted without a field gets the schema's default for it, as the chat page shows it filled in", async () => {
    const withDefaults = {
      mode: 'form' as const,
      message: 'Anything to change?',
      requestedSchema: {
        type: 'object' as const,
        properties: {
          name: { type: 'string' as const, default: 'John Doe' },
          age: { type: 'integer' as const, default: 30 },
          verified: { type: 'boolean' as const, default: true },
          note: { type: 'string' as const },
        },
      },
    };
    const acceptsEmpty: CallInFlight = { ask: () => Promise.resolve({ action: 'accept', content: { age: 41 } }) };
    const result = await routeElicitation(
      new Set([acceptsEmpty]),
      withDefaults,
      new AbortController().signal,
      () => {},
    );
    expect(result).toEqual({ action: 'accept', content: { name: 'John Doe', age: 41, verified: true } });
  });

  it('a task’s question names its task: it goes to that task’s request, whatever else runs on the session', async () => {
    const asked: string[] = [];
    const signal = new AbortController().signal;
    const task = { ...call('task', asked), taskId: 't-1' };
    const question = { ...params, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't-1' } } };
    const calls = new Set([call('a', asked), task, call('b', asked)]);
    expect(await routeElicitation(calls, question, signal, () => undefined)).toEqual({
      action: 'accept',
      content: { name: 'task' },
    });
    const other = { ...params, _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't-2' } } };
    expect(await routeElicitation(calls, other, signal, () => undefined)).toEqual({ action: 'cancel' });
    expect(asked).toEqual(['task: Who are you?']);
  });
});
