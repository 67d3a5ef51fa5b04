import { spawn, type ChildProcess } from 'node:child_process';
import { processCpuMs } from '../machine.js';

/** `durable-agent worker` in a process of its own, as a user runs it, so that its CPU time is its own. */
export class WorkerProcess {
  private output = '';

  private constructor(private readonly child: ChildProcess) {
    child.stdout
      ?.setEncoding('utf8')
      .on('data', (chunk: string) => (this.output = (this.output + chunk).slice(-20_000)));
    child.stderr
      ?.setEncoding('utf8')
      .on('data', (chunk: string) => (this.output = (this.output + chunk).slice(-20_000)));
  }

  /** Start `node <cli> worker` with `env` and return once it polls (or fail with its output). */
  static async start(cli: string, env: NodeJS.ProcessEnv): Promise<WorkerProcess> {
    const worker = new WorkerProcess(
      spawn(process.execPath, [cli, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const deadline = Date.now() + 180_000;
    while (!worker.output.includes('Worker: polling')) {
      if (worker.child.exitCode !== null || Date.now() > deadline) {
        await worker.stop();
        throw new Error(`the worker did not start:\n${worker.output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return worker;
  }

  /** CPU time of the worker's process so far (Linux), in ms. */
  cpuMs(): number | undefined {
    return this.child.pid === undefined ? undefined : processCpuMs(this.child.pid);
  }

  /** Its latest output, for a run that failed. */
  get log(): string {
    return this.output;
  }

  /** SIGTERM (it drains), then SIGKILL after 20 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}
