import type { ConnectionPlugin } from '@temporalio/client';
import type { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { cancellableRetryInterceptor } from '../client/grpc-retry.js';
import { loadConfig, type Config } from '../config/index.js';
import {
  DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS,
  dynamicConfigFlags,
  resolveDevServer,
  resolveTestServer,
  ServerUnavailableError,
  TEST_DEV_SERVER_DYNAMIC_CONFIG,
  type ProgressLog,
  type ProvisionedServer,
} from '../temporal-servers/index.js';
import { errorMessage } from '../shared/errors.js';

interface EnvironmentOptions {
  /** Where the servers are provisioned from (cache dir, TEMPORAL_*_PATH); default `loadConfig()` of process.env. */
  config?: Config;
  /** Receives provisioning progress; default: lines on stderr. */
  log?: ProgressLog;
  /** Arguments appended to the server's command line; default none. */
  extraArgs?: string[];
}

export type TimeSkippingEnvironmentOptions = EnvironmentOptions;

export interface LocalEnvironmentOptions extends EnvironmentOptions {
  /** Search attributes registered at start-up; default the ones durable-agent workflows upsert. */
  searchAttributes?: SearchAttributeKey[];
  /** SQLite file that keeps the server's state; default in memory (gone at teardown). */
  dbFilename?: string;
  /** Namespace created at start-up; default `default`. */
  namespace?: string;
  /** Web UI port, to look at a test run in a browser; default no UI. */
  uiPort?: number;
}

// @temporalio/common does not export the key type from its entry point.
type SearchAttributeKey = ReturnType<typeof defineSearchAttributeKey<SearchAttributeType>>;

type Executable = { type: 'existing-path'; path: string } | { type: 'cached-download' };

function toExecutable(server: ProvisionedServer): Executable {
  return server.kind === 'path' ? { type: 'existing-path', path: server.path } : { type: 'cached-download' };
}

/**
 * The environment's client connection (`env.connection`, `env.client`) retries failed calls as durable-agent's own
 * client does (`cancellableRetryInterceptor`) instead of with the SDK's default interceptor, whose retry due after the
 * connection closed throws "Channel has been shut down" from a timer: a call still being retried at `teardown()` (a long
 * poll the stopped server dropped) was an uncaught exception in the test process, in whichever test ran there next.
 * Here such a call fails ("Not sent again"). The workers' native connection retries in sdk-core and is unaffected.
 */
const closeSafeRetries: ConnectionPlugin = {
  name: 'durable-agent.close-safe-retries',
  configureConnection: (options) => ({ ...options, interceptors: [cancellableRetryInterceptor()] }),
};

async function startServer(
  what: string,
  server: ProvisionedServer,
  start: (executable: Executable) => Promise<TestWorkflowEnvironment>,
): Promise<TestWorkflowEnvironment> {
  try {
    return await start(toExecutable(server));
  } catch (error) {
    const cause = errorMessage(error);
    if (server.kind === 'sdk-download') {
      throw new ServerUnavailableError(
        `Cannot start the Temporal ${what}: ${server.reason} (The SDK's own download failed too: ${cause})`,
        { cause: error },
      );
    }
    throw new Error(`The Temporal ${what} at ${server.path} did not start: ${cause}`, { cause: error });
  }
}

/**
 * Starts Temporal's time-skipping test server (one per test file): awaiting a workflow result, or `env.sleep`, jumps
 * over timers. A server that cannot be provisioned is an error, never a skipped test.
 */
export async function createTimeSkippingEnvironment(
  options: TimeSkippingEnvironmentOptions = {},
): Promise<TestWorkflowEnvironment> {
  const config = options.config ?? loadConfig();
  const server = await resolveTestServer(config, { log: options.log });
  return await startServer('time-skipping test server', server, (executable) =>
    startedWithinSdkWindow(() =>
      TestWorkflowEnvironment.createTimeSkipping({
        server: { executable, extraArgs: options.extraArgs },
        plugins: [closeSafeRetries],
      }),
    ),
  );
}

/** Starts of the JVM test server tried before its failure is reported. */
const TEST_SERVER_STARTS = 3;

/**
 * The SDK gives the JVM test server 5 s to open its port (not configurable) and stops it when that passes; on a machine
 * busy enough the JVM takes longer (docs/servers.md), so a start that ran out of that window is tried again, on a new
 * port (the SDK reports a launcher that exits at once the same way, so that one is tried as often). Any other failure
 * is reported at once.
 */
async function startedWithinSdkWindow(start: () => Promise<TestWorkflowEnvironment>): Promise<TestWorkflowEnvironment> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= TEST_SERVER_STARTS || !/did not start within/.test(errorMessage(error))) throw error;
    }
  }
}

/**
 * Starts a real Temporal dev server (`temporal server start-dev`, one per test file) on a free port, with
 * durable-agent's search attributes registered and eager activities on, as `durable-agent dev` runs. A server that cannot be provisioned is an error, never a skipped test.
 */
export async function createLocalEnvironment(options: LocalEnvironmentOptions = {}): Promise<TestWorkflowEnvironment> {
  const config = options.config ?? loadConfig();
  const server = await resolveDevServer(config, { log: options.log });
  return await startServer('dev server', server, (executable) =>
    TestWorkflowEnvironment.createLocal({
      server: {
        executable,
        searchAttributes: options.searchAttributes ?? DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS,
        // Eager activities as under `durable-agent dev`: the tests see the same dispatch as the product.
        extraArgs: [...dynamicConfigFlags(TEST_DEV_SERVER_DYNAMIC_CONFIG), ...(options.extraArgs ?? [])],
        dbFilename: options.dbFilename,
        namespace: options.namespace,
        uiPort: options.uiPort,
      },
      plugins: [closeSafeRetries],
    }),
  );
}
