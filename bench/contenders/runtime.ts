import { DefaultLogger, Runtime } from '@temporalio/worker';

/** Only warnings and errors from the SDK: a worker's info lines for thousands of workflows would swamp the output. */
export function installQuietRuntime(): void {
  Runtime.install({ logger: new DefaultLogger('WARN') });
}

export const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.error(message),
  error: (message: string) => console.error(message),
  log: () => undefined,
};
