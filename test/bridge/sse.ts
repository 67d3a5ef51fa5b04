import { expect } from 'vitest';

export interface SseMessage {
  id?: string;
  event: string;
  data: string;
}

/**
 * A real HTTP client reading server-sent events with fetch, until `stop` says so for a message. Returns the messages
 * read (comments, such as keep-alives, are skipped).
 */
export async function readEvents(
  url: string,
  stop: (message: SseMessage) => boolean,
  headers: Record<string, string> = {},
): Promise<SseMessage[]> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const messages: SseMessage[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const message: SseMessage = { event: 'message', data: '' };
        let isComment = true;
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          isComment = false;
          const colon = line.indexOf(':');
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') message.id = value;
          else if (field === 'event') message.event = value;
          else if (field === 'data') message.data += value;
        }
        if (isComment) continue;
        messages.push(message);
        if (stop(message)) return messages;
      }
    }
  } finally {
    controller.abort();
  }
  return messages;
}
