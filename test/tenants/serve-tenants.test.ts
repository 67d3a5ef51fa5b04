import { describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { ServeConfigError, createServeToken } from '../../src/bridge/index.js';
import { serveStreamingBridge } from '../../src/bridge/serve.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { httpRequest, type HttpAnswer } from '../bridge/http-request.js';

/**
 * Issue 45, item 1: a scoped token that acts for a tenant opens only that tenant's conversations (403 and nothing
 * changes otherwise), and the conversations it creates belong to its tenant. A real bridge over HTTP on a real Temporal
 * test server, real HS256 tokens.
 */

const bed = useTimeSkippingWithCrm();
const SECRET = 'a-secret-of-at-least-32-bytes-for-hs256!';
const answers = Array.from({ length: 6 }, (_, index) => ({ content: `Answer ${index + 1}.` }));

async function bridge() {
  const agent = await bed.agentWith(answers);
  const client = new DurableAgentClient({ client: bed.env.client, taskQueue: agent.taskQueue });
  const served = await serveStreamingBridge({ agent: client, port: 0, secret: SECRET });
  bed.onCleanup(() => served.close());
  return { url: served.url, client };
}

const post = (token: string, body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify(body),
});

function expectRefusal(answer: HttpAnswer, status: number, type: string): void {
  expect({ status: answer.status, body: answer.json() }).toMatchObject({ status, body: { error: { type } } });
}

describe('serve: tenants', () => {
  it("tenants: a token for tenant A creates A's conversation, and cannot touch tenant B's (403, nothing changes)", async () => {
    const { url, client } = await bridge();
    const tokenA = await createServeToken({ secret: SECRET, conversations: ['t-a', 't-b'], write: true, tenant: 'a' });
    const sent = await httpRequest(`${url}/conversations/t-a/messages`, post(tokenA, { content: 'hi' }));
    expect(sent.status).toBe(202);
    expect(await client.tenantOf('t-a')).toBe('a');

    await client.ask('t-b', 'hello from b', { settings: { tenant: 'b' } });
    const before = await client.status('t-b');
    expectRefusal(
      await httpRequest(`${url}/conversations/t-b/messages`, post(tokenA, { content: 'x' })),
      403,
      'OtherTenant',
    );
    expectRefusal(
      await httpRequest(`${url}/conversations/t-b/events`, { headers: { authorization: `Bearer ${tokenA}` } }),
      403,
      'OtherTenant',
    );
    const after = await client.status('t-b');
    expect(after.turns).toBe(before.turns);
    expect(after.transcriptLength).toBe(before.transcriptLength);
  });

  it('tenants: a tenant token refuses a conversation without a tenant; a token without a tenant opens both', async () => {
    const { url, client } = await bridge();
    await client.ask('t-none', 'hello');
    const tokenA = await createServeToken({ secret: SECRET, conversations: ['t-none'], write: true, tenant: 'a' });
    expectRefusal(
      await httpRequest(`${url}/conversations/t-none/messages`, post(tokenA, { content: 'x' })),
      403,
      'OtherTenant',
    );
    const plain = await createServeToken({ secret: SECRET, conversations: ['t-none'], write: true });
    expect((await httpRequest(`${url}/conversations/t-none/messages`, post(plain, { content: 'y' }))).status).toBe(202);
  });

  it('tenants: a token for a tenant id that cannot be one is not signed', async () => {
    await expect(createServeToken({ secret: SECRET, conversations: ['c'], tenant: 'x'.repeat(65) })).rejects.toThrow(
      ServeConfigError,
    );
    await expect(createServeToken({ secret: SECRET, conversations: ['c'], tenant: 'a b' })).rejects.toThrow(
      /not valid \(it holds whitespace/,
    );
  });
});
