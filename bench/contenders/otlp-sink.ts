import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Where the traced contender's spans go: an OTLP/HTTP endpoint on loopback that reads each request whole and answers
 * 200, as a collector does, and keeps nothing. The exporter's work (batching, encoding, sending) is then the worker's
 * real cost of tracing; no collector's work is added to the machine.
 */
export async function startOtlpSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
