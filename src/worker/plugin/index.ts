import { Client, type ClientOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../activities/index.js';
import { encryptionDataConverter, failureConverterPath, workerDataConverter } from '../../codec/data-converter.js';
import type { EncryptionKey } from '../../codec/keys.js';
import { DurableAgentClient } from '../../client/durable-agent-client.js';
import { McpPool } from '../mcp/pool.js';
import { assertOneTemporalSdk } from './temporal-sdk-copies.js';
import { agentWorkflowsPath, withAgentWorkflows } from './workflows-module.js';

export { agentWorkflowsPath, AGENT_WORKFLOW_NAMES } from './workflows-module.js';
export { DuplicateTemporalSdkError } from './temporal-sdk-copies.js';

/** The plugin's name, as Temporal lists it among a worker's plugins. */
export const DURABLE_AGENT_PLUGIN_NAME = 'durable-agent';

/**
 * Cancellation reaches an activity with its next heartbeat: heartbeats flushed at least this often let an interrupt or
 * the time limit abort a model or MCP request within a second or two, not at 80% of the heartbeat timeout.
 */
const MAX_HEARTBEAT_THROTTLE_INTERVAL = '1 second';

export interface DurableAgentPluginOptions extends Omit<ActivityDependencies, 'temporal' | 'mcp'> {
  /** The MCP connection pool the tool activities call. Default: no MCP servers. */
  mcp?: ActivityDependencies['mcp'];
  /**
   * The client the activities signal and query conversations with. Default: a client on the worker's own connection
   * and namespace, with the worker's data converter.
   */
  temporal?: Client;
  /**
   * Keys that encrypt what the worker records (docs/security.md): the first encrypts, all decrypt. They make the
   * worker's data converter, so a worker given keys must not have a data converter of its own. Default none: the
   * worker's data converter, or plain JSON payloads with no stack traces in failures when it has none.
   */
  encryptionKeys?: readonly EncryptionKey[];
}

/**
 * durable-agent's workflows and activities for a Temporal worker: the application's task queue, interceptors, data
 * converter and workflows stay; the conversation workflow joins its workflows and the agent's activities join its
 * activities. With `workflowsPath`, the worker's bundle holds both; a prebuilt `workflowBundle` must be built with
 * `bundleWorkflowCode({ workflowsPath, plugins: [plugin] })`, which joins them the same way.
 */
export class DurableAgentPlugin extends SimplePlugin {
  readonly #agent: DurableAgentPluginOptions;

  constructor(options: DurableAgentPluginOptions) {
    super({ name: DURABLE_AGENT_PLUGIN_NAME });
    this.#agent = options;
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    // Before the worker is made: two SDK copies meet in native code, where the crash names neither.
    assertOneTemporalSdk();
    const dataConverter = this.#dataConverter(options.dataConverter);
    const namespace = options.namespace ?? 'default';
    const temporal = this.#activityClient({ connection: options.connection, namespace }, options.dataConverter);
    const activities = createActivities({
      ...this.#agent,
      mcp: this.#agent.mcp ?? new McpPool([]),
      temporal,
      sendScheduledMessage: (taskQueue, conversationId, content, { tenant, ...sendOptions }) =>
        new DurableAgentClient({ client: temporal, taskQueue }).send(conversationId, content, {
          ...sendOptions,
          // The settings of a conversation the firing creates; one that exists keeps its own.
          ...(tenant === undefined ? {} : { settings: { tenant } }),
        }),
      // Asked whether Temporal answers before a finished result is handed over: by default the worker's own connection.
      workerConnection: this.#agent.workerConnection ?? options.connection,
    });
    return {
      ...super.configureWorker(options),
      dataConverter,
      ...this.#workflows(options),
      // A name the application registers too keeps the application's activity: the agent's are all it adds.
      activities: { ...activities, ...options.activities },
      ...(options.maxHeartbeatThrottleInterval === undefined
        ? { maxHeartbeatThrottleInterval: MAX_HEARTBEAT_THROTTLE_INTERVAL }
        : {}),
    };
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    assertOneTemporalSdk();
    return {
      ...super.configureReplayWorker(options),
      dataConverter: this.#dataConverter(options.dataConverter),
      ...this.#workflows(options),
    };
  }

  /** Joins the application's workflows module with the agent's, whether the worker bundles or the application does. */
  override configureBundler(options: BundleOptions): BundleOptions {
    return {
      ...super.configureBundler(options),
      workflowsPath: withAgentWorkflows(options.workflowsPath),
      // The converter the plugin's data converter names (a worker with its own sets its own path before this).
      failureConverterPath: options.failureConverterPath ?? failureConverterPath(this.#agent.encryptionKeys),
    };
  }

  /** A worker with neither workflowsPath nor a bundle runs the agent's workflows alone; else the bundler joins them. */
  #workflows(options: Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle'>): Pick<WorkerOptions, 'workflowsPath'> {
    if (options.workflowsPath !== undefined || options.workflowBundle !== undefined) return {};
    return { workflowsPath: agentWorkflowsPath };
  }

  #dataConverter(existing: DataConverter | undefined): DataConverter {
    const keys = this.#agent.encryptionKeys ?? [];
    if (existing === undefined) return workerDataConverter(keys);
    if (keys.length > 0) {
      throw new TypeError(
        "durableAgentPlugin: encryptionKeys make the worker's data converter, but the worker has a dataConverter " +
          'of its own. Pass the keys (and use encryptionDataConverter(keys) in your clients) or the data converter, not both.',
      );
    }
    return existing;
  }

  /**
   * The activities' signals and queries are payloads the conversation reads: they are written with the worker's keys,
   * or with the application's data converter when the worker has one.
   */
  #activityClient(
    options: Pick<ClientOptions, 'connection' | 'namespace'>,
    applicationConverter: DataConverter | undefined,
  ): Client {
    const keys = this.#agent.encryptionKeys ?? [];
    const given = this.#agent.temporal;
    const dataConverter = applicationConverter ?? encryptionDataConverter(keys);
    if (given === undefined) return new Client({ ...options, dataConverter });
    if (keys.length === 0) return given;
    return new Client({
      connection: given.connection,
      namespace: given.options.namespace,
      interceptors: given.options.interceptors,
      dataConverter,
    });
  }
}

/** durable-agent as a Temporal worker plugin: `Worker.create({ ..., plugins: [durableAgentPlugin({ ... })] })`. */
export function durableAgentPlugin(options: DurableAgentPluginOptions): DurableAgentPlugin {
  return new DurableAgentPlugin(options);
}
