import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { repoRoot } from '../options.js';

/** How long the bridge process may take to connect and listen. */
const STARTUP_TIMEOUT_MS = 60_000;

/** `durable-agent serve` in a child process (bench/first-token/serve-process.ts), and the URL it listens on. */
export class BridgeProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {}

  static async start(config: { address: string; namespace: string; taskQueue: string }): Promise<BridgeProcess> {
    const child = fork(`${repoRoot}bench/dist/bench/first-token/serve-process.js`, [JSON.stringify(config)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the bridge did not listen within 60 s')), STARTUP_TIMEOUT_MS);
        child.once('message', (message: { url: string }) => {
          clearTimeout(timer);
          resolve(message.url);
        });
        child.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`the bridge process exited (code ${code}) before listening`));
        });
      });
      return new BridgeProcess(child, url);
    } catch (error) {
      child.kill();
      throw error;
    }
  }

  /** Disconnecting tells the bridge to close its streams and subscriptions; killed if it has not exited in 10 s. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill(), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
