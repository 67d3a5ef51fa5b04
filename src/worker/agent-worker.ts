import path from 'node:path';
import { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import {
  bundleWorkflowCode,
  type BundleOptions,
  NativeConnection,
  Worker,
  type WorkerOptions,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ActivityDependencies } from './activities/index.js';
import { anthropicSdk, openaiSdk } from './activities/model/provider-sdks.js';
import { ENCODED_FAILURE_CONVERTER_PATH, STACKLESS_FAILURE_CONVERTER_PATH } from '../codec/data-converter.js';
import type { EncryptionKey } from '../codec/keys.js';
import { connectCancellable, connectionOptions, DEFAULT_TEMPORAL_ADDRESS } from '../client/connection.js';
import { cacheDirOf, type Config } from '../config/index.js';
import { loadMcpConfig } from './mcp/config.js';
import { loadPriceTable } from './pricing/price-table.js';
import { McpPool } from './mcp/pool.js';
import { agentWorkflowsPath, durableAgentPlugin } from './plugin/index.js';
import { looksSecret, Redactor } from '../shared/redaction.js';
import { startTelemetry, workerTelemetry, type Telemetry } from './telemetry/index.js';
import { deploymentVersion as versionOf, workerDeploymentOptions } from './versioning.js';
import { cachedWorkflowBundle } from './workflow-bundle-cache.js';
import { concurrencyOptions } from './concurrency.js';
import { readWorkerConcurrency, type WorkerConcurrency } from '../config/worker-concurrency.js';
import { readTenants } from '../config/tenants.js';
import { readTenantCallsPerSecond } from '../config/tenant-rate-limit.js';
import { applyTenantRateLimit, tenantRateLimitMessage } from './tenant-rate-limit.js';

/** The workflows module: `.ts` when running from source (tests), `.js` once built. */
export const workflowsPath = agentWorkflowsPath;

const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();

/**
 * The workflow bundle, built once per process and kept on disk for the next (bundling takes seconds of CPU; a kept
 * bundle is used only while every file it was built from is unchanged, see {@link cachedWorkflowBundle}), and built
 * quietly: the bundler's progress lines would bury the worker's own output. With `encodeFailures` (what a worker with
 * encryption keys runs), the workflow's own failures (e.g. a refused message) carry their message in an encoded
 * payload, which the codec encrypts: see {@link encryptionDataConverter}. No failure carries a stack trace.
 * `interceptorModules` are bundled as workflow interceptors (tracing's, `workerTelemetry`); default none.
 * `cacheDirectory` is where bundles are kept: default `workflow-bundles` in `DURABLE_AGENT_CACHE_DIR`
 * (`~/.cache/durable-agent`); `false` builds every process's bundle anew.
 */
export function bundleWorkflows(
  options: { encodeFailures?: boolean; interceptorModules?: string[]; cacheDirectory?: string | false } = {},
): Promise<WorkflowBundleWithSourceMap> {
  const encodeFailures = options.encodeFailures ?? false;
  const interceptorModules = options.interceptorModules ?? [];
  const cacheDirectory = options.cacheDirectory ?? path.join(cacheDirOf(), 'workflow-bundles');
  const key = JSON.stringify([encodeFailures, interceptorModules, cacheDirectory]);
  let bundle = bundles.get(key);
  if (bundle === undefined) {
    const bundleOptions = {
      workflowsPath,
      workflowInterceptorModules: interceptorModules,
      // The converter a worker's data converter names: the bundle's own failures (e.g. a refused message) must be
      // converted the same way (encoded with keys; never with a stack trace).
      failureConverterPath: encodeFailures ? ENCODED_FAILURE_CONVERTER_PATH : STACKLESS_FAILURE_CONVERTER_PATH,
    };
    const build = (extra: Pick<BundleOptions, 'webpackConfigHook'>) =>
      bundleWorkflowCode({ ...bundleOptions, ...extra, logger: quietBundlerLogger });
    bundle = cacheDirectory === false ? build({}) : cachedWorkflowBundle(cacheDirectory, bundleOptions, build);
    bundles.set(key, bundle);
  }
  return bundle;
}

const ignore = () => undefined;
const quietBundlerLogger = {
  trace: ignore,
  debug: ignore,
  info: ignore,
  log: ignore,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

export interface AgentWorkerOptions extends ActivityDependencies {
  connection: NativeConnection;
  taskQueue: string;
  /** Default `default`. */
  namespace?: string;
  /**
   * Keys that encrypt what the worker records (docs/security.md): the first encrypts, all decrypt. The activities'
   * own client (`temporal`) gets the same codec. With keys, failures' messages and stack traces are encrypted too.
   * Default none: payloads and failures are plain JSON.
   */
  encryptionKeys?: readonly EncryptionKey[];
  /**
   * Run as this Worker Deployment Version (docs/upgrading.md): conversations are pinned to the version that runs their
   * turns and move to the deployment's current version between turns. Default none: an unversioned worker.
   */
  deploymentVersion?: WorkerDeploymentVersion;
  /**
   * Traces, metrics and log ids (docs/observability.md), from {@link startTelemetry}. A `worker.workflowBundle` passed
   * in must then have been built with its workflow interceptors (`bundleWorkflows({ interceptorModules })`). Default
   * none: no interceptor, no sink, nothing exported.
   */
  telemetry?: Telemetry;
  /** Any other Temporal worker option (e.g. `workflowBundle`, `maxCachedWorkflows`); these win over ours. */
  worker?: Partial<WorkerOptions>;
}

/**
 * A Temporal worker running the conversation workflow and durable-agent's activities, and nothing else: the
 * {@link durableAgentPlugin} on a worker of its own, with the workflow bundle built once per process.
 */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<Worker> {
  const { connection, taskQueue, namespace, worker, encryptionKeys, deploymentVersion, telemetry, ...dependencies } =
    options;
  const observed =
    telemetry === undefined
      ? undefined
      : workerTelemetry(
          telemetry,
          { defaultModel: dependencies.defaultModel, secrets: dependencies.secrets },
          dependencies.temporal,
        );
  return await Worker.create({
    connection,
    namespace: namespace ?? 'default',
    taskQueue,
    // A bundle passed in must have been built with the same failure converter (bundleWorkflows does that).
    workflowBundle:
      worker?.workflowBundle ??
      (await bundleWorkflows({
        encodeFailures: (encryptionKeys?.length ?? 0) > 0,
        interceptorModules: observed?.workflowInterceptorModules,
      })),
    interceptors: observed?.interceptors,
    sinks: observed?.sinks,
    ...(deploymentVersion === undefined ? {} : workerDeploymentOptions(deploymentVersion)),
    ...worker,
    plugins: [
      durableAgentPlugin({ ...dependencies, encryptionKeys }),
      ...(observed?.plugins ?? []),
      ...(worker?.plugins ?? []),
    ],
  });
}

/** An OpenAI client for the configured endpoint. Temporal owns retries, so the client never retries by itself. */
export function createOpenAIClient(config: Config): OpenAI {
  const { default: OpenAIClient } = openaiSdk();
  return new OpenAIClient({
    baseURL: config.model.baseUrl,
    // Local OpenAI-compatible servers (Ollama, vLLM, llama.cpp, the scripted model) accept any key.
    apiKey: config.model.apiKey ?? 'not-set',
    maxRetries: 0,
  });
}

/**
 * An Anthropic client when the worker is configured for one (`ANTHROPIC_API_KEY` or `ANTHROPIC_BASE_URL`), else
 * undefined. The key is passed explicitly so the SDK reads no other credentials; it never retries by itself.
 */
export function createAnthropicClient(config: Config): Anthropic | undefined {
  const { anthropicApiKey, anthropicBaseUrl } = config.model;
  if (anthropicApiKey === undefined && anthropicBaseUrl === undefined) return undefined;
  const { default: AnthropicClient } = anthropicSdk();
  return new AnthropicClient({
    ...(anthropicBaseUrl === undefined ? {} : { baseURL: anthropicBaseUrl }),
    apiKey: anthropicApiKey ?? 'not-set',
    maxRetries: 0,
  });
}

export interface WorkerReadyInfo {
  address: string;
  namespace: string;
  taskQueue: string;
  /** The Worker Deployment Version the worker runs as; absent when versioning is off. */
  deploymentVersion?: WorkerDeploymentVersion;
}

export interface RunWorkerOptions {
  config: Config;
  /** host:port of the Temporal frontend; defaults to `config.temporal.address` or {@link DEFAULT_TEMPORAL_ADDRESS}. */
  address?: string;
  /** Called once the worker is polling, e.g. to print where it runs. */
  onReady?: (info: WorkerReadyInfo) => void;
  /**
   * The worker's secrets, e.g. the registry its Runtime logger redacts with ({@link installWorkerRuntime}). Default:
   * the secret-looking variables of `process.env`. The configured keys and the MCP servers' secrets are added to it.
   */
  secrets?: Redactor;
  /** How much the worker runs at once (docs/tenants.md); default from `DURABLE_AGENT_MAX_CONCURRENT_*`. */
  concurrency?: WorkerConcurrency;
  /**
   * Each tenant's activity tasks (model and tool calls) per second, times its weight, set on the task queue at start
   * (docs/tenants.md); default from `DURABLE_AGENT_TENANT_CALLS_PER_SECOND`. None leaves the queue's config as it is.
   */
  tenantCallsPerSecond?: number;
}

/**
 * Connect, run the durable-agent worker until SIGINT/SIGTERM (the Temporal runtime's default shutdown signals),
 * then drain and close. Resolves when the worker has stopped.
 */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { config } = options;
  const address = options.address ?? config.temporal.address ?? DEFAULT_TEMPORAL_ADDRESS;
  const { namespace } = config.temporal;
  const secrets = options.secrets ?? new Redactor().addEnvironment(process.env);
  for (const [name, value] of [
    ['OPENAI_API_KEY', config.model.apiKey],
    ['ANTHROPIC_API_KEY', config.model.anthropicApiKey],
    ['TEMPORAL_API_KEY', config.temporal.apiKey],
  ] as const) {
    if (value !== undefined && looksSecret(value)) secrets.add(value, `\${${name}}`);
  }
  // Read before connecting, like the MCP configuration: a bad price file stops the worker with a ConfigError.
  const prices = loadPriceTable(config.pricesPath);
  const concurrency = concurrencyOptions(options.concurrency ?? readWorkerConcurrency());
  // A bad tenants file stops every process that reads it, at start; the worker checks daily limits with it.
  const tenants = readTenants();
  const callsPerSecond = options.tenantCallsPerSecond ?? readTenantCallsPerSecond();
  const mcp = new McpPool(loadMcpConfig(config.mcpConfigPath), {
    // Each server's messages are redacted with its own secrets already; these are all of the worker's.
    logger: {
      warn: (message, meta) => console.warn(secrets.text(message), meta === undefined ? '' : secrets.value(meta)),
      info: (message, meta) => console.info(secrets.text(message), meta === undefined ? '' : secrets.value(meta)),
      debug: () => undefined,
    },
    onServerStderr: (server, line) => process.stderr.write(`[mcp ${server}] ${secrets.text(line)}\n`),
  });
  // Address, TLS and API key as the client builds them, so the worker reaches every cluster the CLI does.
  const clientOptions = await connectionOptions({ ...config.temporal, address });
  // The native connection takes the same TLS; its API key is a plain string, never the client's function form.
  const connection = await NativeConnection.connect({
    address,
    tls: clientOptions.tls,
    apiKey: config.temporal.apiKey,
    metadata: clientOptions.metadata,
  });
  // Its retries end with it: an activity's call still retried when a stop during an outage closes it fails, where the
  // SDK's interceptor threw "Channel has been shut down" from a timer and the worker exited with code 1.
  const clientConnection = await connectCancellable(clientOptions);
  const deploymentVersion = config.workerVersioning === undefined ? undefined : versionOf(config.workerVersioning);
  const telemetry = startTelemetry();
  try {
    if (callsPerSecond !== undefined) {
      // Before the worker polls; a refusal is a warning: the limit protects the model's quota, it is not needed to run.
      const limit = { connection: clientConnection, namespace, taskQueue: config.taskQueue, callsPerSecond };
      const outcome = await applyTenantRateLimit(limit);
      (outcome.applied ? console.info : console.warn)(tenantRateLimitMessage(outcome, limit));
      // An eager activity comes back with the workflow task's completion and skips matching, where the limit acts.
      // Off after a refusal too: a limit the operator then sets by hand holds without restarting the workers.
      concurrency.maxEagerActivityReservationsPerWorkflowTask = 0;
    }
    const worker = await createAgentWorker({
      connection,
      namespace,
      taskQueue: config.taskQueue,
      openai: createOpenAIClient(config),
      anthropic: createAnthropicClient(config),
      defaultModel: config.model.model,
      mcp,
      temporal: new Client({ connection: clientConnection, namespace }),
      toolResultMaxChars: config.toolResultMaxChars,
      keepFinished: config.keepResults ? undefined : false,
      secrets,
      prices,
      tenants,
      encryptionKeys: config.encryptionKeys,
      deploymentVersion,
      telemetry,
      worker: concurrency,
    });
    options.onReady?.({
      address,
      namespace,
      taskQueue: config.taskQueue,
      ...(deploymentVersion ? { deploymentVersion } : {}),
    });
    await worker.run();
  } finally {
    await telemetry?.tracing?.shutdown();
    await mcp.close();
    await clientConnection.close();
    await connection.close();
  }
}
