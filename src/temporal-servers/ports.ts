import net from 'node:net';

/** Asks the OS for a port that is free right now on 127.0.0.1. */
export async function findFreePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on host:port. */
export async function isPortOpen(port: number, host = '127.0.0.1', timeoutMs = 1_000): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const finish = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

export interface WaitForPortOptions {
  /** Host to connect to; default 127.0.0.1. */
  host?: string;
  /** Give up after this long; default 30 s. */
  timeoutMs?: number;
  /** Time between attempts; default 100 ms. */
  intervalMs?: number;
  /** Stop waiting early, e.g. when the server process exits; default never. */
  signal?: AbortSignal;
}

/** Resolves once host:port accepts connections; rejects on timeout or abort. */
export async function waitForPort(port: number, options: WaitForPortOptions = {}): Promise<void> {
  const { host = '127.0.0.1', timeoutMs = 30_000, intervalMs = 100, signal } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    if (await isPortOpen(port, host, intervalMs * 5)) return;
    if (Date.now() > deadline) throw new Error(`Nothing answered on ${host}:${port} within ${timeoutMs / 1000} s.`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
