import net from 'node:net';

/**
 * A TCP relay in front of the Temporal server that can cut the path, as a network partition does, and restore it. While
 * held, bytes in either direction wait in the relay (a call in flight neither answers nor fails) and new connections
 * wait to be relayed; `cut` also closes the connections open now (the server then drops the polls that came through
 * them, as it does for a worker that is gone). `down` closes them and every new one at once, as a server that is
 * down does. `restore` relays everything that waited, in order.
 */
export class Partition {
  private held = false;
  private refusing = false;
  private readonly links = new Set<Link>();

  private constructor(
    private readonly server: net.Server,
    private readonly target: { host: string; port: number },
  ) {}

  /** A relay to `address` (`host:port`) on a free local port. */
  static async open(address: string): Promise<Partition> {
    const [host = '127.0.0.1', port] = address.split(':');
    const server = net.createServer();
    const partition = new Partition(server, { host, port: Number(port) });
    server.on('connection', (client) => partition.accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return partition;
  }

  /** Where to connect instead of the server. */
  get address(): string {
    return `127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  /** Stop relaying: what is sent now waits. */
  hold(): void {
    this.held = true;
  }

  /** Stop relaying and close every connection open now. */
  cut(): void {
    this.hold();
    for (const link of this.links) link.close();
  }

  /** Close every connection, and each new one at once: the server seems down. */
  down(): void {
    this.refusing = true;
    this.cut();
  }

  /** Relay again, what waited first. */
  restore(): void {
    this.held = false;
    this.refusing = false;
    for (const link of this.links) link.flush();
  }

  async close(): Promise<void> {
    for (const link of this.links) link.close();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private accept(client: net.Socket): void {
    if (this.refusing) {
      client.destroy();
      return;
    }
    const link = new Link(client, () => this.held, this.target);
    this.links.add(link);
    client.on('close', () => this.links.delete(link));
    if (!this.held) link.flush();
  }
}

/** One relayed connection: the client's socket, the server's once connected, and the bytes waiting either way. */
class Link {
  private upstream: net.Socket | undefined;
  private readonly toServer: Buffer[] = [];
  private readonly toClient: Buffer[] = [];

  constructor(
    private readonly client: net.Socket,
    private readonly held: () => boolean,
    private readonly target: { host: string; port: number },
  ) {
    client.on('error', () => undefined);
    client.on('close', () => this.upstream?.destroy());
    client.on('data', (chunk) => {
      this.toServer.push(chunk);
      if (!held()) this.flush();
    });
  }

  flush(): void {
    if (this.client.destroyed) return;
    if (this.upstream === undefined) {
      const upstream = net.connect(this.target);
      this.upstream = upstream;
      upstream.on('error', () => this.client.destroy());
      upstream.on('close', () => this.client.destroy());
      upstream.on('data', (chunk) => {
        this.toClient.push(chunk);
        if (!this.held()) this.flush();
      });
    }
    for (const chunk of this.toServer.splice(0)) this.upstream.write(chunk);
    for (const chunk of this.toClient.splice(0)) this.client.write(chunk);
  }

  close(): void {
    this.client.destroy();
    this.upstream?.destroy();
  }
}
