import { DefaultLogger, Runtime } from '@temporalio/worker';

// Workers log every state change at INFO, which buries test failures; warnings and errors still show.
Runtime.install({ logger: new DefaultLogger('WARN') });
