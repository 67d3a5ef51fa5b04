import http from 'node:http';

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body, or for an event stream what arrived until `until` held (then the connection is dropped). */
  body: string;
  json: () => unknown;
}

export interface HttpRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  /** For a response that does not end (an event stream): stop reading once this holds for the text so far. */
  until?: (text: string) => boolean;
}

/**
 * One HTTP request with node:http, which sends headers as given (fetch would not let a test set `Host`, as an attacker's
 * DNS rebinding does). A `text/event-stream` answer is read until `until` holds, or only its headers without `until`.
 */
export function httpRequest(url: string, request: HttpRequest = {}): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = http.request(url, { method: request.method ?? 'GET', headers: request.headers }, (response) => {
      let body = '';
      const answer = (): HttpAnswer => ({
        status: response.statusCode!,
        headers: response.headers,
        body,
        json: () => JSON.parse(body) as unknown,
      });
      const streaming = /^text\/event-stream/.test(response.headers['content-type'] ?? '');
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
        if (streaming && request.until?.(body)) {
          resolve(answer());
          outgoing.destroy();
        }
      });
      response.on('end', () => resolve(answer()));
      response.on('error', () => resolve(answer()));
      if (streaming && request.until === undefined) {
        resolve(answer());
        outgoing.destroy();
      }
    });
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}
