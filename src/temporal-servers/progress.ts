/** Where provisioning reports its progress; one call per line, without a trailing newline. */
export type ProgressLog = (line: string) => void;

/** Writes progress lines to stderr so they never mix with a command's output on stdout. */
export const stderrLog: ProgressLog = (line) => {
  process.stderr.write(`${line}\n`);
};

/** A log that drops everything, for callers that must stay quiet. */
export const silentLog: ProgressLog = () => {};

const HEARTBEAT_MS = 30_000;

function seconds(sinceMs: number): string {
  return `${((Date.now() - sinceMs) / 1000).toFixed(1)} s`;
}

/**
 * Reports the steps of one provisioning job as `[durable-agent] <subject>: <step> …` and `… done (12.3 s)`, because a
 * cold build takes minutes and a silent terminal looks hung.
 */
export class Progress {
  private readonly startedAt = Date.now();

  constructor(
    private readonly subject: string,
    private readonly log: ProgressLog,
  ) {}

  info(message: string): void {
    this.log(`[durable-agent] ${this.subject}: ${message}`);
  }

  async step<T>(description: string, run: () => Promise<T>): Promise<T> {
    const stepStartedAt = Date.now();
    this.info(`${description} …`);
    // A compile can run for minutes without a line of output; a heartbeat shows it is alive.
    const heartbeat = setInterval(
      () => this.info(`… still working (${seconds(stepStartedAt)}): ${description}`),
      HEARTBEAT_MS,
    );
    heartbeat.unref();
    try {
      const result = await run();
      this.info(`${description} done (${seconds(stepStartedAt)})`);
      return result;
    } catch (error) {
      this.info(`${description} failed after ${seconds(stepStartedAt)}`);
      throw error;
    } finally {
      clearInterval(heartbeat);
    }
  }

  finished(summary: string): void {
    this.info(`${summary} (${seconds(this.startedAt)} in total)`);
  }
}
