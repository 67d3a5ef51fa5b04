import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

export interface EventStreamDelivery {
  /** Milliseconds between two chunks. Default: 0. */
  chunkDelayMs?: number;
  /** Drop the connection after this many chunks instead of finishing the stream. Default: never. */
  failAfterChunks?: number;
  /** Aborted when the server closes, so that a slow stream does not keep it open. */
  signal: AbortSignal;
  /** Name each event after its `type` (`event: message_start`), as Anthropic and the Responses API do. Default: no. */
  namedEvents?: boolean;
  /** End with `data: [DONE]`, as Chat Completions does. Default: yes. */
  done?: boolean;
  /** Called right after each write with the chunks it held, e.g. to timestamp the first text. Default: none. */
  written?: (chunks: readonly unknown[]) => void;
}

const DONE = 'data: [DONE]\n\n';

function event(chunk: unknown, named: boolean): string {
  const name = named ? (chunk as { type?: unknown }).type : undefined;
  return `${typeof name === 'string' ? `event: ${name}\n` : ''}data: ${JSON.stringify(chunk)}\n\n`;
}

/** Drop the connection once what was written has reached the socket, so the client sees the chunks then an error. */
export function dropConnection(response: ServerResponse): void {
  response.write('', () => response.destroy());
}

/** Send chunks as server-sent events, ending with `data: [DONE]` when the API does. */
export async function writeEventStream(
  response: ServerResponse,
  chunks: readonly unknown[],
  delivery: EventStreamDelivery,
): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const { chunkDelayMs = 0, failAfterChunks, namedEvents = false } = delivery;
  const done = delivery.done === false ? '' : DONE;

  // The common case in tests and benchmarks: one write for the whole stream.
  if (chunkDelayMs === 0 && failAfterChunks === undefined) {
    response.end(chunks.map((chunk) => event(chunk, namedEvents)).join('') + done);
    delivery.written?.(chunks);
    return;
  }

  for (const [index, chunk] of chunks.entries()) {
    if (index === failAfterChunks) return dropConnection(response);
    if (index > 0 && chunkDelayMs > 0) await sleep(chunkDelayMs, undefined, { signal: delivery.signal });
    if (response.destroyed) return;
    response.write(event(chunk, namedEvents));
    delivery.written?.([chunk]);
  }
  if (failAfterChunks !== undefined && failAfterChunks >= chunks.length) return dropConnection(response);
  response.end(done);
}
