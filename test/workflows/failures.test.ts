import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import { serveMcpOverHttp } from '../../src/testing/mcp-http.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { toolResults } from '../helpers/transcript.js';

const bed = useTimeSkippingWithCrm();

const { agentWith } = bed;

describe('a failing model', () => {
  it('429 with retry-after is retried after the delay (time-skipped) with the same idempotency key', async () => {
    const agent = await agentWith([
      { error: { status: 429, headers: { 'retry-after': '120' }, times: 2 } },
      { content: 'Made it.' },
    ]);
    const result = await agent.ask('Hello');
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Made it.', rounds: 1 });
    const keys = agent.model.requests.map((request) => request.idempotencyKey);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it('500 then success: the retry answers the turn', async () => {
    const agent = await agentWith([{ error: { status: 500 } }, { content: 'Recovered.' }]);
    const result = await agent.ask('Hello');
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'Recovered.' });
    expect(agent.model.requests.map((request) => request.status)).toEqual([500, 200]);
  });

  it('400 ends the turn with error:ModelBadRequest after one attempt, without failing the conversation', async () => {
    const agent = await agentWith([{ error: { status: 400 } }]);
    const result = await agent.ask('Hello');
    expect(result).toMatchObject({ stopReason: `error:${FailureType.ModelBadRequest}`, answer: null, rounds: 0 });
    expect(result.error?.message).toMatch(/HTTP 400/);
    expect(agent.model.requests).toHaveLength(1);
  });

  it('401 ends the turn with error:ModelAuthentication and says to check the API key', async () => {
    const agent = await agentWith([{ error: { status: 401 } }]);
    const result = await agent.ask('Hello');
    expect(result.stopReason).toBe(`error:${FailureType.ModelAuthentication}`);
    expect(result.error?.message).toContain('OPENAI_API_KEY');
    expect(agent.model.requests).toHaveLength(1);
  });
});

describe('a failing tool', () => {
  it('a server that goes away after listing its tools gives the model a "tool unavailable" result', async () => {
    const served = await serveMcpOverHttp(() => {
      const server = new McpServer({ name: 'ephemeral', version: '1.0.0' });
      server.registerTool('lookup', { description: 'Look something up.', annotations: { readOnlyHint: true } }, () => ({
        content: [{ type: 'text', text: 'found' }],
      }));
      return server;
    });
    bed.onCleanup(() => served.close());
    const agent = await agentWith(
      [
        async () => {
          await served.close(); // the server dies between listing the tools and the call
          return { toolCalls: [{ name: 'ephemeral__lookup', arguments: {} }] };
        },
        { content: 'The lookup service is down.' },
      ],
      { mcpServers: [{ ...bed.crm.config('ephemeral'), url: served.url }] },
    );
    const result = await agent.ask('Look it up');
    expect(result).toMatchObject({ stopReason: 'completed', answer: 'The lookup service is down.', toolCalls: 1 });
    const [entry] = toolResults(agent.model.requests[1]!.messages);
    expect(entry?.content).toMatch(/^Error: the tool ephemeral__lookup is unavailable right now/);
  });

  it('a timed-out call to a tool that is not idempotent is not retried: the model hears the outcome is unknown', async () => {
    const before = bed.crm.calls.hang ?? 0;
    const agent = await agentWith(
      [{ toolCalls: [{ name: 'slowcrm__hang', arguments: {} }] }, { content: 'I will check before retrying.' }],
      { mcpServers: [bed.crm.config('slowcrm', { timeoutMs: 1_000 })] },
    );
    const result = await agent.ask('Do the risky thing');
    expect(result).toMatchObject({ stopReason: 'completed', toolCalls: 1 });
    expect((bed.crm.calls.hang ?? 0) - before).toBe(1);
    const [entry] = toolResults(agent.model.requests[1]!.messages);
    expect(entry?.content).toMatch(/may or may not/i);
  });
});
