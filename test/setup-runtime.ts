import { createRequire } from 'node:module';
import type * as TemporalWorker from '@temporalio/worker';
import { beforeAll } from 'vitest';

const require = createRequire(import.meta.url);

/**
 * Workers log every state change at INFO, which buries test failures; warnings and errors still show. The Runtime is
 * installed before the file's first hook, and only in a file that has loaded the Temporal worker by then (each file
 * runs in a process of its own): loading it takes half a second of CPU, which the files that never create a Runtime
 * (pure units, the MCP, model and codec tests) would pay for nothing. A file that loads it later, during a test, gets
 * the Runtime's default logger.
 */
beforeAll(() => {
  if (require.cache[require.resolve('@temporalio/worker')] === undefined) return;
  const { DefaultLogger, Runtime } = require('@temporalio/worker') as typeof TemporalWorker;
  Runtime.install({ logger: new DefaultLogger('WARN') });
});
