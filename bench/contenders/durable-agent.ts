import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type WorkerOptions } from '@temporalio/worker';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { encryptionDataConverter } from '../../src/codec/data-converter.js';
import { readEncryptionKeys } from '../../src/config/index.js';
import { McpPool } from '../../src/worker/mcp/pool.js';
import {
  clientTelemetryInterceptors,
  startTelemetry,
  WORKFLOW_TRACING_INTERCEPTORS,
} from '../../src/worker/telemetry/index.js';
import { createAgentWorker, workflowsPath } from '../../src/worker/agent-worker.js';
import { conversationWorkflow } from '../../src/workflows/conversation.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import type { ChatCompletionsClient } from '../../src/worker/activities/model/call.js';
import type { AnthropicMessagesClient } from '../../src/worker/activities/model/providers/anthropic.js';
import type { ResponsesClient } from '../../src/worker/activities/model/providers/openai-responses.js';
import { runMain, serveContender, WorkClock, type ContenderDriver } from '../harness.js';
import { promptOf, stepsOf, type TurnSpec } from '../workload.js';
import { parseContenderArguments, type ContenderConfig } from './config.js';
import { BENCH_MODELS, benchProviderOf } from './providers.js';
import { benchMcpServer, timedPool } from './mcp.js';
import { startOtlpSink } from './otlp-sink.js';
import { replayOnColdWorker } from './replay.js';
import { installQuietRuntime, quietBundlerLogger } from './runtime.js';

/** The `durable-agent-no-heartbeat-timeout` experiment's workflow interceptors (./no-heartbeat-timeout.ts), built. */
const NO_HEARTBEAT_TIMEOUT_INTERCEPTORS = fileURLToPath(new URL('./no-heartbeat-timeout.js', import.meta.url));

/** The workflow an activity runs for: the key its model and tool time is added up under. */
function currentWorkflowId(): string | undefined {
  try {
    return Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined;
  }
}

/** The OpenAI client with every request timed on `clock`, Chat Completions and Responses alike. */
function timedOpenAI(openai: OpenAI, clock: WorkClock): ChatCompletionsClient & ResponsesClient {
  return {
    baseURL: openai.baseURL,
    chat: {
      completions: {
        create: (body, options) => clock.time(currentWorkflowId(), () => openai.chat.completions.create(body, options)),
      },
    },
    responses: {
      create: (body, options) => clock.time(currentWorkflowId(), () => openai.responses.create(body, options)),
    },
  };
}

/** The Anthropic client with every request timed on `clock`. */
function timedAnthropic(anthropic: Anthropic, clock: WorkClock): AnthropicMessagesClient {
  return {
    baseURL: anthropic.baseURL,
    messages: {
      create: (body, options) => clock.time(currentWorkflowId(), () => anthropic.messages.create(body, options)),
    },
  };
}

/** `BENCH_STREAM=false`: conversations that do not stream, to measure what streaming costs per step. */
function settingsOf(model: string | undefined): { settings?: { model?: string; stream?: boolean } } {
  const settings = {
    ...(model === undefined ? {} : { model }),
    ...(process.env.BENCH_STREAM === 'false' ? { stream: false } : {}),
  };
  return Object.keys(settings).length === 0 ? {} : { settings };
}

/** `BENCH_WORKFLOW_THREADS=N` (and `BENCH_REUSE_V8_CONTEXT=false`): the workflow thread pool to measure. */
function workflowThreadOptions(): Partial<WorkerOptions> {
  const threads = process.env.BENCH_WORKFLOW_THREADS;
  return {
    ...(threads === undefined ? {} : { workflowThreadPoolSize: Number(threads) }),
    ...(process.env.BENCH_REUSE_V8_CONTEXT === 'false' ? { reuseV8Context: false } : {}),
  };
}

/**
 * `BENCH_EXPERIMENT=no-heartbeats`: every `heartbeat()` of an activity does nothing, to measure what the model and
 * tool activities' heartbeats (one sent at once per call, see src/activities) cost per step. Measurement only: it
 * reaches into the activity context's private heartbeat function.
 */
function experimentInterceptors(): Partial<WorkerOptions> {
  if (process.env.BENCH_EXPERIMENT !== 'no-heartbeats') return {};
  return {
    interceptors: {
      activity: [
        (context) => {
          (context as unknown as { heartbeatFn: () => void }).heartbeatFn = () => undefined;
          return {};
        },
      ],
    },
  };
}

/** durable-agent as users run it: the project's worker, a conversation per turn (one-shot: `closeWhenIdle`). */
async function createDurableAgentDriver(config: ContenderConfig): Promise<ContenderDriver> {
  const clock = new WorkClock();
  const pool = new McpPool([benchMcpServer(config.mcpServerScript)]);
  const nativeConnection = await NativeConnection.connect({ address: config.address });
  const connection = await Connection.connect({ address: config.address });
  // DURABLE_AGENT_ENCRYPTION_KEYS (the durable-agent-encrypted contender): the client and worker encrypt, as users run them.
  const encryptionKeys = readEncryptionKeys();
  const dataConverter = encryptionDataConverter(encryptionKeys);
  // BENCH_TRACING (the durable-agent-traced contender): traces on, as OTEL_EXPORTER_OTLP_ENDPOINT turns them on, sent
  // to a sink in this process.
  const sink = process.env.BENCH_TRACING === '1' ? await startOtlpSink() : undefined;
  const telemetry = sink === undefined ? undefined : startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url });
  const client = new Client({
    connection,
    namespace: config.namespace,
    dataConverter,
    interceptors: { workflow: clientTelemetryInterceptors(telemetry) },
  });
  const openai = new OpenAI({ baseURL: config.modelBaseUrl, apiKey: 'bench', maxRetries: 0 });
  // The scripted model serves the Messages API at the same address, without the `/v1` the OpenAI client adds.
  const anthropic = new Anthropic({
    baseURL: config.modelBaseUrl.replace(/\/v1$/, ''),
    apiKey: 'bench',
    maxRetries: 0,
  });
  // BENCH_PROVIDER (the `--providers` contenders): every conversation names that provider in its model.
  const model = BENCH_MODELS[benchProviderOf(process.env.BENCH_PROVIDER)];
  const worker = await createAgentWorker({
    connection: nativeConnection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    openai: timedOpenAI(openai, clock),
    anthropic: timedAnthropic(anthropic, clock),
    defaultModel: 'scripted-model',
    mcp: timedPool(pool, clock, currentWorkflowId),
    temporal: client,
    encryptionKeys,
    telemetry,
    worker: {
      workflowBundle: await bundleWorkflowCode({
        workflowsPath,
        logger: quietBundlerLogger,
        workflowInterceptorModules: [
          ...(telemetry === undefined ? [] : [WORKFLOW_TRACING_INTERCEPTORS]),
          ...(process.env.BENCH_EXPERIMENT === 'no-heartbeat-timeout' ? [NO_HEARTBEAT_TIMEOUT_INTERCEPTORS] : []),
        ],
        // With keys, the workflow's failures are encoded as the worker's own bundle has them (src/worker/agent-worker.ts).
        ...(dataConverter.failureConverterPath ? { failureConverterPath: dataConverter.failureConverterPath } : {}),
      }),
      ...experimentInterceptors(),
      ...workflowThreadOptions(),
    },
  });
  const running = worker.run();

  const converse = async (conversation: string, turns: TurnSpec[]) => {
    const conversationId = `${conversation}-${randomUUID().slice(0, 8)}`;
    const handle = await client.workflow.start(conversationWorkflow, {
      taskQueue: config.taskQueue,
      workflowId: conversationWorkflowId(conversationId),
      args: [
        {
          conversationId,
          ...settingsOf(model),
          messages: turns.map((spec, index) => ({ id: `m${index}`, content: promptOf(spec, String(index)) })),
          closeWhenIdle: true,
        },
      ],
    });
    const outcome = await handle.result();
    const last = outcome.state.lastResult;
    const expected = turns.at(-1)?.chain;
    if (last?.stopReason !== 'completed' || last.toolCalls !== expected) {
      throw new Error(`durable-agent: ${handle.workflowId} ended unexpectedly: ${JSON.stringify(last)}`);
    }
    return handle;
  };

  return {
    async runTurn(conversation, spec) {
      const handle = await converse(conversation, [spec]);
      const execution = { workflowId: handle.workflowId, runId: handle.firstExecutionRunId };
      return { workMs: clock.take(handle.workflowId), execution };
    },
    async runConversation(conversation, turns) {
      const handle = await converse(conversation, turns);
      clock.take(handle.workflowId);
      return {
        steps: turns.reduce((total, turn) => total + stepsOf(turn.chain), 0),
        execution: { workflowId: handle.workflowId, runId: handle.firstExecutionRunId },
      };
    },
    drainWork: () => clock.drain(),
    async close() {
      try {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      } finally {
        await telemetry?.tracing?.shutdown();
        await sink?.close();
        await pool.close();
        await connection.close();
        await nativeConnection.close();
      }
    },
  };
}

async function main(): Promise<void> {
  installQuietRuntime();
  const parsed = parseContenderArguments(process.argv.slice(2));
  if (parsed.mode === 'replay') {
    return replayOnColdWorker(parsed.config, workflowsPath, encryptionDataConverter(readEncryptionKeys()));
  }
  const { config } = parsed;
  await serveContender(() => createDurableAgentDriver(config));
}

runMain(main);
