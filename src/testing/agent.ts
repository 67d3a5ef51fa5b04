import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
// @temporalio/proto is CommonJS: Node's ESM loader offers its exports on the default import only.
import proto from '@temporalio/proto';
import { DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS } from '../shared/search-attributes.js';
import type { McpConfig, McpServerConfig } from '../worker/mcp/config.js';
import { McpPool, type McpPoolOptions } from '../worker/mcp/pool.js';
import { anthropicSdk, openaiSdk } from '../worker/activities/model/provider-sdks.js';
import type { AnthropicMessagesClient } from '../worker/activities/model/providers/anthropic.js';
import { createAgentWorker, type AgentWorkerOptions } from '../worker/agent-worker.js';
import { conversationWorkflow } from '../workflows/conversation.js';
import {
  conversationWorkflowId,
  type ConversationInput,
  type ConversationOutcome,
  type ConversationSettings,
  type TurnResult,
} from '../workflows/definitions.js';
import { startScriptedModel, type ScriptedModel } from './scripted-model/index.js';
import type { Script } from './scripted-model/script.js';

export interface TestAgentOptions {
  /** A Temporal test environment, e.g. from `createTimeSkippingEnvironment()`. */
  env: TestWorkflowEnvironment;
  /** The scripted model's script; or pass `model` to share one scripted model server between agents. */
  script?: Script;
  model?: ScriptedModel;
  /** MCP servers the worker may call, in the `mcpServers` config shape (already parsed). Default none. */
  mcpServers?: McpConfig | McpServerConfig[];
  /** Options of the worker's MCP pool, e.g. the `tokenStore` of OAuth logins. */
  mcpOptions?: McpPoolOptions;
  /** Default a fresh `test-<uuid>` queue, so tests never pick up each other's tasks. */
  taskQueue?: string;
  /** Model name the worker uses when a conversation names none. Default `scripted-model`. */
  defaultModel?: string;
  /** Passed through to `createAgentWorker` (e.g. `toolResultMaxChars`, `worker: { maxCachedWorkflows: 0 }`). */
  workerOptions?: Partial<
    Omit<AgentWorkerOptions, 'connection' | 'taskQueue' | 'openai' | 'anthropic' | 'temporal' | 'mcp'>
  >;
}

export interface TestAgent extends AsyncDisposable {
  readonly env: TestWorkflowEnvironment;
  readonly model: ScriptedModel;
  readonly mcp: McpPool;
  readonly taskQueue: string;
  /** Run a one-message conversation to its first turn's result (time skips while it waits). */
  ask(message: string, options?: { conversationId?: string; settings?: ConversationSettings }): Promise<TurnResult>;
  /** Start a conversation workflow (`conversation-<id>`) and return its handle. */
  startConversation(
    conversationId: string,
    options?: Omit<ConversationInput, 'conversationId'>,
  ): ReturnType<TestWorkflowEnvironment['client']['workflow']['start']>;
  /** Stop the worker, the MCP pool and (if this agent started it) the scripted model. */
  close(): Promise<void>;
}

const registered = new WeakSet<TestWorkflowEnvironment>();

/**
 * Register the search attributes conversations upsert (the time-skipping server starts without them; a workflow
 * that upserts an unknown one fails its tasks). Registering one that exists already is harmless.
 */
export async function registerSearchAttributes(env: TestWorkflowEnvironment): Promise<void> {
  if (registered.has(env)) return;
  const searchAttributes = Object.fromEntries(
    DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS.map((key) => [key.name, indexedValueType(key.type)]),
  );
  try {
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes,
    });
  } catch (error) {
    if (!/already exists/i.test(String(error))) throw error;
  }
  registered.add(env);
}

const { temporal } = proto;

function indexedValueType(type: string): proto.temporal.api.enums.v1.IndexedValueType {
  return type === 'INT'
    ? temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT
    : temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
}

/**
 * A real durable-agent worker (the project's workflows and activities) on a test environment, pointed at a scripted
 * OpenAI-compatible model server and real MCP servers. `close()` (or `await using`) stops everything it started.
 */
export async function startTestAgent(options: TestAgentOptions): Promise<TestAgent> {
  const { env } = options;
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  const ownsModel = options.model === undefined;
  const model = options.model ?? (await startScriptedModel({ script: options.script ?? [] }));
  await registerSearchAttributes(env);
  const mcp = new McpPool(options.mcpServers ?? [], options.mcpOptions);
  let worker: Awaited<ReturnType<typeof createAgentWorker>> | undefined;
  let running: Promise<void> | undefined;
  try {
    worker = await createAgentWorker({
      defaultModel: options.defaultModel ?? 'scripted-model',
      ...options.workerOptions,
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      openai: new (openaiSdk().default)({ baseURL: model.baseUrl, apiKey: 'test', maxRetries: 0 }),
      anthropic: anthropicOnFirstCall(model.anthropicBaseUrl),
      temporal: env.client,
      mcp,
      worker: options.workerOptions?.worker,
    });
    running = worker.run();
  } catch (error) {
    await mcp.close();
    if (ownsModel) await model.close();
    throw error;
  }
  const startedWorker = worker;
  const workerRun = running;

  const startConversation: TestAgent['startConversation'] = (conversationId, input = {}) =>
    env.client.workflow.start(conversationWorkflow, {
      taskQueue,
      workflowId: conversationWorkflowId(conversationId),
      args: [{ conversationId, ...input }],
    });

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      if (startedWorker.getState() === 'RUNNING') startedWorker.shutdown();
      await workerRun;
    } finally {
      await mcp.close();
      if (ownsModel) await model.close();
    }
  };

  return {
    env,
    model,
    mcp,
    taskQueue,
    startConversation,
    async ask(message, askOptions = {}) {
      const conversationId = askOptions.conversationId ?? randomUUID();
      const handle = await startConversation(conversationId, {
        settings: askOptions.settings ?? {},
        messages: [{ id: randomUUID(), content: message }],
        closeWhenIdle: true,
      });
      // Awaiting the workflow's result (not an update) lets the time-skipping server jump over timers and backoffs.
      const outcome = (await handle.result()) as ConversationOutcome;
      if (!outcome.state.lastResult)
        throw new Error(`Conversation ${conversationId} closed without a turn result: ${JSON.stringify(outcome)}`);
      return outcome.state.lastResult;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

export { conversationWorkflowId, type ConversationOutcome };

/**
 * The scripted model's Anthropic endpoint through the real SDK, which the first call to an `anthropic:` model loads
 * and creates: most tests make none, and loading it takes a third of a second.
 */
function anthropicOnFirstCall(baseURL: string): AnthropicMessagesClient {
  let created: AnthropicMessagesClient | undefined;
  const client = () =>
    (created ??= new (anthropicSdk().default)({ baseURL, apiKey: 'test', maxRetries: 0 }) as AnthropicMessagesClient);
  return {
    baseURL,
    messages: { create: (body, options) => client().messages.create(body, options) },
    // Provider-native compaction (`compaction: "provider"`) goes through the beta Messages API.
    beta: { messages: { create: (body, options) => client().beta!.messages.create(body, options) } },
  };
}
