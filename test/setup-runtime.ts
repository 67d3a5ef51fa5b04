import { createRequire } from 'node:module';
import type * as TemporalCommon from '@temporalio/common';
import type * as TemporalWorker from '@temporalio/worker';
import { beforeAll } from 'vitest';

const require = createRequire(import.meta.url);

/**
 * Workers log every state change at INFO, which buries test failures; warnings and errors still show. The Runtime is
 * installed before the file's first hook, and only once the Temporal worker is loaded: loading it takes half a second
 * of CPU, which the files that never create a Runtime (pure units, the MCP, model and codec tests) would pay for
 * nothing. A file that loads it later, during a test, gets the Runtime's default logger. A test file shares its
 * process with the files before it (vitest.config.ts), so the Runtime may exist already: it is kept, with the options
 * it was installed with (the SDK creates it again with them after it shut down when idle).
 */
beforeAll(() => {
  if (require.cache[require.resolve('@temporalio/worker')] === undefined) return;
  const { DefaultLogger, Runtime } = require('@temporalio/worker') as typeof TemporalWorker;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch (error) {
    const { IllegalStateError } = require('@temporalio/common') as typeof TemporalCommon;
    if (!(error instanceof IllegalStateError)) throw error;
  }
});
