// The peer contender: Temporal's own TypeScript integration (@temporalio/openai-agents) on its own SDK version, so
// it lives in its own directory with its own node_modules and is plain ESM (the project's TypeScript build would
// resolve @temporalio/* 1.24 types). The harness it shares with the other contenders imports no Temporal package.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { MCPServerStdio } from '@openai/agents-core';
import { OpenAIProvider } from '@openai/agents-openai';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { OpenAIAgentsPlugin, StatelessMCPServerProvider } from '@temporalio/openai-agents';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import OpenAI from 'openai';
import { runMain, serveContender, WorkClock } from '../dist/bench/harness.js';
import { parseContenderArguments } from '../dist/bench/contenders/config.js';
import { promptOf, stepsOf } from '../dist/bench/workload.js';

const workflowsPath = fileURLToPath(new URL('./workflows.js', import.meta.url));

const quietBundlerLogger = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message) => console.error(message),
  error: (message) => console.error(message),
  log: () => undefined,
};

function currentWorkflowId() {
  try {
    return Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined;
  }
}

/**
 * The stdio MCP server, connected once per worker and shared by every call. `StatelessMCPServerProvider` calls
 * `connect()` and `close()` around every activity; with a stdio server that would spawn a process per tool call, so
 * the shared server ignores both and the comparison is with a pooled connection, as durable-agent's pool keeps one.
 */
function sharedMcpServer(server, clock) {
  return {
    get name() {
      return server.name;
    },
    cacheToolsList: false,
    connect: async () => undefined,
    close: async () => undefined,
    listTools: () => clock.time(currentWorkflowId(), () => server.listTools()),
    callTool: (toolName, args, meta) => clock.time(currentWorkflowId(), () => server.callTool(toolName, args, meta)),
    invalidateToolsCache: () => server.invalidateToolsCache(),
  };
}

function plugin(config, clock, mcpServer) {
  const openAIClient = new OpenAI({
    baseURL: config.modelBaseUrl,
    apiKey: 'bench',
    maxRetries: 0,
    // Every model request, timed under the workflow its activity runs for.
    fetch: (url, init) => clock.time(currentWorkflowId(), () => fetch(url, init)),
  });
  return new OpenAIAgentsPlugin({
    // The scripted model speaks Chat Completions; the provider's default is the Responses API.
    modelProvider: new OpenAIProvider({ openAIClient, useResponses: false }),
    mcpServerProviders: mcpServer ? [new StatelessMCPServerProvider('bench', () => mcpServer)] : [],
  });
}

async function createPeerDriver(config) {
  const clock = new WorkClock();
  const stdio = new MCPServerStdio({ name: 'bench', command: process.execPath, args: [config.mcpServerScript] });
  await stdio.connect();
  const agentsPlugin = plugin(config, clock, sharedMcpServer(stdio, clock));
  const nativeConnection = await NativeConnection.connect({ address: config.address });
  const connection = await Connection.connect({ address: config.address });
  const client = new Client({ connection, namespace: config.namespace, plugins: [agentsPlugin] });
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath, plugins: [agentsPlugin], logger: quietBundlerLogger }),
    plugins: [agentsPlugin],
  });
  const running = worker.run();

  const converse = async (conversation, turns) => {
    const handle = await client.workflow.start('chainAgentWorkflow', {
      taskQueue: config.taskQueue,
      workflowId: `peer-${conversation}-${randomUUID().slice(0, 8)}`,
      args: [turns.map((spec, index) => promptOf(spec, String(index)))],
    });
    const answer = await handle.result();
    const expected = `done after ${turns.at(-1).chain} tool calls`;
    if (answer !== expected) throw new Error(`peer: ${handle.workflowId} answered ${JSON.stringify(answer)}`);
    return handle;
  };

  return {
    async runTurn(conversation, spec) {
      const handle = await converse(conversation, [spec]);
      return { workMs: clock.take(handle.workflowId) };
    },
    async runConversation(conversation, turns) {
      const handle = await converse(conversation, turns);
      clock.take(handle.workflowId);
      return {
        steps: turns.reduce((total, turn) => total + stepsOf(turn.chain), 0),
        execution: { workflowId: handle.workflowId, runId: handle.firstExecutionRunId },
      };
    },
    async close() {
      try {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      } finally {
        await stdio.close();
        await connection.close();
        await nativeConnection.close();
      }
    },
  };
}

async function replay(config) {
  // The peer's long histories are larger than gRPC's default 4 MB message.
  const connection = await Connection.connect({
    address: config.address,
    channelArgs: { 'grpc.max_receive_message_length': 512 * 2 ** 20 },
  });
  let history;
  try {
    const client = new Client({ connection, namespace: config.namespace });
    history = await client.workflow.getHandle(config.workflowId, config.runId).fetchHistory();
  } finally {
    await connection.close();
  }
  const agentsPlugin = plugin({ modelBaseUrl: 'http://127.0.0.1:9/v1' }, new WorkClock(), undefined);
  const bundleStarted = performance.now();
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath,
    plugins: [agentsPlugin],
    logger: quietBundlerLogger,
  });
  const replayStarted = performance.now();
  await Worker.runReplayHistory({ workflowBundle, plugins: [agentsPlugin] }, history, config.workflowId);
  const replayMs = performance.now() - replayStarted;
  const result = {
    events: history.events?.length ?? 0,
    bundleMs: replayStarted - bundleStarted,
    replayMs,
    rssBytes: process.memoryUsage.rss(),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function main() {
  // The benchmark starts this process with OPENAI_AGENTS_DISABLE_TRACING=1: traces would go to OpenAI's API.
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const parsed = parseContenderArguments(process.argv.slice(2));
  if (parsed.mode === 'replay') return replay(parsed.config);
  await serveContender(() => createPeerDriver(parsed.config));
}

runMain(main);
