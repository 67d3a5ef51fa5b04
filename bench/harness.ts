import { performance } from 'node:perf_hooks';
import type { BatchResult, Command, ConversationResult, Reply, TurnSample } from './protocol.js';
import type { TurnSpec } from './workload.js';

/**
 * The contender side of the benchmark: a process that answers the parent's commands over IPC. It imports no Temporal
 * package, so that Temporal's own integration (bench/peer, on its own SDK version) can use it too.
 */

export interface ContenderDriver {
  /** Run one turn as a new conversation and return the model and tool time it spent (see {@link WorkClock}). */
  runTurn(conversation: string, spec: TurnSpec): Promise<{ workMs: number; execution?: TurnSample['execution'] }>;
  /** Run one conversation of several turns and describe its history. */
  runConversation(conversation: string, turns: TurnSpec[]): Promise<ConversationResult>;
  /** The model and tool time not taken by a turn of this process, by key (see {@link WorkClock.drain}). */
  drainWork?(): Record<string, number>;
  close(): Promise<void>;
}

/**
 * Adds up, per conversation, the time spent inside model requests and tool calls. The wrappers around the model
 * client and the MCP client call {@link WorkClock.time}; the driver takes the total when the turn ends. Chains are
 * sequential, so the intervals of one conversation never overlap.
 */
export class WorkClock {
  private readonly totals = new Map<string, number>();

  async time<T>(key: string | undefined, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      if (key !== undefined) this.totals.set(key, (this.totals.get(key) ?? 0) + performance.now() - started);
    }
  }

  take(key: string): number {
    const total = this.totals.get(key) ?? 0;
    this.totals.delete(key);
    return total;
  }

  /** Every total not taken yet (time spent here for turns another process started), forgotten. */
  drain(): Record<string, number> {
    const totals = Object.fromEntries(this.totals);
    this.totals.clear();
    return totals;
  }
}

/** Samples the process's resident set size, to report the peak of each batch. */
class RssMeter {
  private peak = 0;
  private readonly timer = setInterval(() => this.sample(), 50);

  constructor() {
    this.timer.unref();
  }

  sample(): void {
    this.peak = Math.max(this.peak, process.memoryUsage.rss());
  }

  /** The peak since the last call. */
  takePeak(): number {
    this.sample();
    const peak = this.peak;
    this.peak = 0;
    return peak;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

async function runBatch(
  driver: ContenderDriver,
  rss: RssMeter,
  command: Extract<Command, { type: 'batch' }>,
): Promise<BatchResult> {
  const samples: TurnSample[] = [];
  let next = 0;
  rss.takePeak();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const lane = async () => {
    for (let index = next++; index < command.turns; index = next++) {
      const turnStarted = performance.now();
      const { workMs, execution } = await driver.runTurn(`b${command.id}-${index}`, command.spec);
      samples.push({ latencyMs: performance.now() - turnStarted, workMs, ...(execution ? { execution } : {}) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(command.concurrency, command.turns) }, lane));
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { samples, wallMs, cpuMs: (cpu.user + cpu.system) / 1000, peakRssBytes: rss.takePeak() };
}

function send(reply: Reply): void {
  process.send?.(reply);
}

/**
 * Start the driver, say `ready`, then answer commands one at a time until `close` (or the parent goes away).
 * Every failure is reported to the parent with the command's id rather than crashing the process.
 */
export async function serveContender(createDriver: () => Promise<ContenderDriver>): Promise<void> {
  if (process.send === undefined) throw new Error('A contender runs as a child process of bench/index.js (IPC).');
  const started = performance.now();
  const driver = await createDriver();
  const rss = new RssMeter();
  let queue = Promise.resolve();
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    rss.stop();
    await driver.close();
  };
  process.on('message', (command: Command) => {
    queue = queue.then(async () => {
      try {
        switch (command.type) {
          case 'batch':
            send({ type: 'batch', id: command.id, result: await runBatch(driver, rss, command) });
            break;
          case 'conversation':
            send({
              type: 'conversation',
              id: command.id,
              result: await driver.runConversation(`c${command.id}`, command.turns),
            });
            break;
          case 'drain':
            send({ type: 'drain', id: command.id, workMs: driver.drainWork?.() ?? {} });
            break;
          case 'close':
            await close();
            send({ type: 'closed', id: command.id });
            process.disconnect();
            break;
        }
      } catch (error) {
        send({
          type: 'error',
          id: command.id,
          message: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      }
    });
  });
  // The parent died or disconnected without a `close`: stop the worker anyway.
  process.once('disconnect', () => void close());
  send({ type: 'ready', startupMs: performance.now() - started });
}

/** Entry-point helper for contender scripts: report a start-up failure to the parent and exit non-zero. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    if (process.send) process.send({ type: 'error', id: undefined, message } satisfies Reply);
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
    process.disconnect?.();
  });
}
