import { describe, expect, it } from 'vitest';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { serveStreamingBridge, type ServedBridge } from '../../src/bridge/serve.js';
import type { StreamEvent } from '../../src/workflows/stream-events.js';
import { useTimeSkippingWithCrm } from '../helpers/time-skipping.js';
import { readEvents, type SseMessage } from './sse.js';

const bed = useTimeSkippingWithCrm();

const turnFinished = (message: SseMessage) => message.event === 'turn_finished';
const turnOf = (message: SseMessage) => (JSON.parse(message.data) as StreamEvent).turn;

async function bridgeFor(script: Parameters<typeof bed.agentWith>[0]): Promise<{ served: ServedBridge; url: string }> {
  const agent = await bed.agentWith(script);
  const client = new DurableAgentClient({ client: bed.env.client, taskQueue: agent.taskQueue });
  const served = await serveStreamingBridge({ agent: client, port: 0, keepAliveMs: 200 });
  bed.onCleanup(() => served.close());
  return { served, url: served.url };
}

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('the HTTP bridge (durable-agent serve)', () => {
  it('bridge: two browsers read one turn as server-sent events over one upstream subscription', async () => {
    const { served, url } = await bridgeFor([{ content: 'Hello from the bridge, word by word.', chunkDelayMs: 30 }]);
    const events = `${url}/conversations/bridge-1/events`;
    const first = readEvents(events, turnFinished);
    const second = readEvents(events, turnFinished);

    const sent = await post(`${url}/conversations/bridge-1/messages`, { content: 'Hi', id: 'm-1' });
    expect(sent.status).toBe(202);
    expect(await sent.json()).toMatchObject({ conversationId: 'bridge-1', messageId: 'm-1', created: true });

    const [a, b] = await Promise.all([first, second]);
    expect(served.bridge.hub.subscriptions).toBe(1);
    expect(a).toEqual(b);
    expect(a.map((message) => message.event)).toEqual(
      expect.arrayContaining(['turn_started', 'model_attempt_started', 'text_delta', 'turn_finished']),
    );
    const parsed = a.map((message) => JSON.parse(message.data) as StreamEvent);
    expect(a.map((message) => Number(message.id))).toEqual(parsed.map((event) => event.offset));
    const text = parsed.map((event) => (event.type === 'text_delta' ? event.text : '')).join('');
    expect(text).toBe('Hello from the bridge, word by word.');
    expect(parsed.at(-1)).toMatchObject({ type: 'turn_finished', answer: text, messageId: 'm-1' });

    // A browser that reconnects with Last-Event-ID resumes after that event; a late one gets the turn from its start.
    const resumed = await readEvents(events, turnFinished, { 'last-event-id': a[2]!.id! });
    expect(resumed).toEqual(a.slice(3));
    expect(await readEvents(events, turnFinished)).toEqual(a);
  });

  it('bridge: a browser that reconnects with Last-Event-ID to a restarted bridge gets only what follows, across turns', async () => {
    const agent = await bed.agentWith([
      { content: 'The first answer, word by word.', chunkDelayMs: 20 },
      { content: 'The second answer.', chunkDelayMs: 20 },
    ]);
    const client = new DurableAgentClient({ client: bed.env.client, taskQueue: agent.taskQueue });
    const before = await serveStreamingBridge({ agent: client, port: 0, keepAliveMs: 200 });
    const events = `${before.url}/conversations/bridge-restart/events`;
    const first = readEvents(events, turnFinished);
    expect((await post(`${before.url}/conversations/bridge-restart/messages`, { content: 'One' })).status).toBe(202);
    const turn1 = await first;
    await before.close();

    // The bridge restarted (a new hub, no upstream yet): the browser had read up to the turn's third event.
    const after = await serveStreamingBridge({ agent: client, port: 0, keepAliveMs: 200 });
    bed.onCleanup(() => after.close());
    const resumedEvents = `${after.url}/conversations/bridge-restart/events`;
    expect(await readEvents(resumedEvents, turnFinished, { 'last-event-id': turn1[2]!.id! })).toEqual(turn1.slice(3));

    // A second turn has run since: a browser that stopped in the first turn gets its rest, then the second turn.
    const second = readEvents(resumedEvents, (message) => turnFinished(message) && turnOf(message) === 2);
    expect((await post(`${after.url}/conversations/bridge-restart/messages`, { content: 'Two' })).status).toBe(202);
    const turn2 = (await second).filter((message) => turnOf(message) === 2);
    expect(turn2[0]).toMatchObject({ event: 'turn_started' });
    await after.close();

    const again = await serveStreamingBridge({ agent: client, port: 0, keepAliveMs: 200 });
    bed.onCleanup(() => again.close());
    let finished = 0;
    const resumed = await readEvents(
      `${again.url}/conversations/bridge-restart/events`,
      (message) => turnFinished(message) && ++finished === 2,
      { 'last-event-id': turn1[2]!.id! },
    );
    expect(resumed).toEqual([...turn1.slice(3), ...turn2]);
  });

  it('bridge: a malformed message is refused with 400 and a named error', async () => {
    const { url } = await bridgeFor([]);
    const response = await post(`${url}/conversations/bridge-2/messages`, { text: 'no content field' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { type: 'InvalidBody' } });
    const notJson = await fetch(`${url}/conversations/bridge-2/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    expect(notJson.status).toBe(400);
    // Without a JSON content type (fetch sends text/plain for a string), refused before the body is read.
    const plain = await fetch(`${url}/conversations/bridge-2/messages`, { method: 'POST', body: '{' });
    expect(plain.status).toBe(415);
    expect(await plain.json()).toMatchObject({ error: { type: 'UnsupportedMediaType' } });
  });
});
