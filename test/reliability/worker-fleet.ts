import { killLeftovers, WorkerProcess, type WorkerEnvironment } from './helpers.js';

/**
 * The worker processes a fault file starts, and the counter files their MCP servers write: whatever is still running at
 * the end, a worker or a server it spawned, is SIGKILLed by {@link killAll}, also after a failed test.
 */
export class WorkerFleet {
  private readonly workers: WorkerProcess[] = [];
  private readonly counterFiles = new Set<string>();

  /** Start a worker (it polls when this resolves) and remember it and its MCP servers' counter file. */
  async start(environment: WorkerEnvironment & { counterFile: string }): Promise<WorkerProcess> {
    this.counterFiles.add(environment.counterFile);
    const worker = await WorkerProcess.start(environment);
    this.workers.push(worker);
    return worker;
  }

  async killAll(): Promise<void> {
    await Promise.allSettled(this.workers.map((worker) => worker.kill()));
    killLeftovers([...this.counterFiles]);
  }
}
