import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { subscribe, type SubscribeOptions } from '../../src/client/stream.js';
import type { StreamEvent } from '../../src/workflows/stream-events.js';

/** Read a conversation's events until a turn finishes (the `turn`th one seen, default the first). */
export async function collectTurn(
  client: Client,
  conversationId: string,
  options: SubscribeOptions & { onEvent?: (event: StreamEvent) => void; turns?: number } = {},
): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  let finished = 0;
  for await (const event of subscribe(client, conversationId, options)) {
    events.push(event);
    options.onEvent?.(event);
    if (event.type === 'turn_finished' && ++finished >= (options.turns ?? 1)) break;
  }
  return events;
}

/** Bytes of a workflow run's history as the server stores it (protobuf), and its number of events. */
export async function historySize(client: Client, workflowId: string): Promise<{ bytes: number; events: number }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const bytes = temporal.api.history.v1.History.encode(temporal.api.history.v1.History.fromObject(history)).finish()
    .length;
  return { bytes, events: history.events?.length ?? 0 };
}

/**
 * Resolves once `predicate` holds, checking every 20 ms (real time: activities run in real time), after `refresh`
 * when given.
 */
export async function until(
  predicate: () => boolean,
  what: string,
  timeoutMs = 30_000,
  refresh?: () => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await refresh?.();
    if (predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
