import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { subscribe } from '../../src/client/stream.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { ScriptStep, StepFunction } from '../../src/testing/scripted-model/script.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import type { StreamEvent } from '../../src/workflows/stream-events.js';
import { killAll, runCli, startCliWorker, type CliRun, type RunningProcess } from '../cli/helpers.js';
import { startGate, type Gate } from '../mcp/helpers.js';
import { allText, canary, occurrences } from '../helpers/secrets.js';

/**
 * Redaction as a rule (issue 19, item 4): with a canary secret in every place a secret can be (the model's API key,
 * an MCP `${VAR}` in args, env, headers and URL, literal Authorization and env values in the MCP configuration, a
 * secret-looking variable of the worker, a bearer token nobody registered), the real CLI worker runs every failure
 * path: the model endpoint echoing the key in its error, a stdio MCP server that prints its environment as it crashes,
 * one that answers with its environment or reports it as progress, HTTP MCP servers that answer 401 and 500 echoing
 * our headers, a model answer that quotes secrets, and configuration errors. Then every event of every history
 * (payloads, failure messages, stack traces), the stream events, the heartbeats seen, the worker's log and every CLI
 * output are searched for each canary.
 */

const leakyServer = fileURLToPath(new URL('./leaky-mcp-server.mjs', import.meta.url));

const secrets = {
  openaiKey: canary('openai-key'),
  mcpVariable: canary('mcp-variable'),
  literalBearer: canary('literal-bearer'),
  literalEnv: canary('literal-env'),
  workerPassword: canary('worker-password'),
  strayBearer: canary('stray-bearer'),
  urlPassword: canary('url-password'),
};

const steps = new Map<string, Array<ScriptStep | StepFunction>>();
let counter = 0;
function conversation(name: string, script: Array<ScriptStep | StepFunction>): string {
  const id = `redaction-${name}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  steps.set(conversationWorkflowId(id), script);
  return id;
}

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let worker: RunningProcess;
let directory: string;
let cliEnv: NodeJS.ProcessEnv;
const gates: Gate[] = [];
let upstream: RunningTestMcpServer;
/** An HTTP MCP server that works until a test makes it answer every request with an error echoing our headers. */
let revocable: Gate;

beforeAll(async () => {
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-redaction-'));
  env = await createLocalEnvironment();
  model = await startScriptedModel({
    script: async (request, { stepIndex }) => {
      const step = steps.get(request.conversation)?.[stepIndex];
      return typeof step === 'function' ? await step(request) : step;
    },
  });
  const refusing = await startGate('http://127.0.0.1:9/mcp', 401);
  const failing = await startGate('http://127.0.0.1:9/mcp', 500);
  upstream = await startTestMcpServer({ transport: 'http', port: 0 });
  revocable = await startGate(upstream.url);
  gates.push(refusing, failing, revocable);
  const mcpConfig = path.join(directory, 'mcp.json');
  await fs.writeFile(
    mcpConfig,
    JSON.stringify({
      mcpServers: {
        leaky: {
          command: process.execPath,
          args: [leakyServer, '--token=${DA_SECRET}'],
          env: { API_KEY: '${DA_SECRET}', SERVICE_TOKEN: secrets.literalEnv },
        },
        refusing: {
          url: `${refusing.url}?key=\${DA_SECRET}`,
          headers: { Authorization: `Bearer ${secrets.literalBearer}`, 'X-Api-Key': '${DA_SECRET}' },
        },
        failing: { url: failing.url, headers: { Authorization: 'Bearer ${DA_SECRET}' } },
        revocable: { url: revocable.url, headers: { Authorization: `Bearer ${secrets.literalBearer}` } },
      },
    }),
  );
  cliEnv = { ...process.env };
  for (const name of Object.keys(cliEnv)) {
    if (name.startsWith('TEMPORAL_') || name.startsWith('DURABLE_AGENT_') || name.startsWith('OPENAI_')) {
      if (!['TEMPORAL_CLI_PATH', 'TEMPORAL_TEST_SERVER_PATH', 'DURABLE_AGENT_CACHE_DIR'].includes(name)) {
        delete cliEnv[name];
      }
    }
  }
  Object.assign(cliEnv, {
    TEMPORAL_ADDRESS: env.address,
    DURABLE_AGENT_TASK_QUEUE: `redaction-${Math.random().toString(36).slice(2, 10)}`,
    DURABLE_AGENT_MCP_CONFIG: mcpConfig,
    DURABLE_AGENT_MODEL: 'scripted-model',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: secrets.openaiKey,
    DA_SECRET: secrets.mcpVariable,
    WAREHOUSE_PASSWORD: secrets.workerPassword,
  });
  worker = await startCliWorker(cliEnv);
}, 120_000);

afterAll(async () => {
  worker?.child.kill('SIGINT');
  await worker?.exited;
  await killAll();
  await Promise.all(gates.map((gate) => gate.close()));
  await upstream?.close();
  await model?.close();
  await env?.teardown();
  if (directory) await fs.rm(directory, { recursive: true, force: true });
});

/** Everything that left the worker and the CLI, by where it was found. */
const found = new Map<string, string>();

async function ask(id: string, message: string): Promise<CliRun> {
  const run = await runCli(['ask', '--conversation', id, '--timeout', '60', message], cliEnv);
  found.set(`CLI output of ${id}`, `${run.stdout}\n${run.stderr}`);
  return run;
}

/** Every event of the conversation's history, and the stream events a subscriber gets from the start. */
async function collect(id: string): Promise<{ history: string; stream: StreamEvent[] }> {
  const handle = env.client.workflow.getHandle(conversationWorkflowId(id));
  const history = allText(await handle.fetchHistory());
  const stream: StreamEvent[] = [];
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), 3_000);
  try {
    for await (const event of subscribe(env.client, id, { from: 0, signal: stop.signal, waitMs: 1_000 })) {
      stream.push(event);
      if (event.type === 'turn_finished') break;
    }
  } finally {
    clearTimeout(timer);
  }
  found.set(`history of ${id}`, history);
  found.set(`stream events of ${id}`, allText(stream));
  return { history, stream };
}

describe('no secret leaves the worker', () => {
  test('the model endpoint answers 401 quoting the API key it was sent', async () => {
    const id = conversation('model-401', [
      (request) => ({
        error: {
          status: 401,
          body: {
            error: {
              message: `Incorrect API key provided: ${request.headers.authorization}.`,
              type: 'invalid_request_error',
              param: null,
              code: 'invalid_api_key',
            },
          },
        },
      }),
    ]);
    const run = await ask(id, 'Hello?');
    expect(run.code).toBe(ExitCode.TurnFailed);
    // The key really went to the endpoint, and its echo came back.
    expect(model.requests.find((r) => r.conversation === conversationWorkflowId(id))?.headers.authorization).toBe(
      `Bearer ${secrets.openaiKey}`,
    );
    const { history } = await collect(id);
    expect(history).toContain('ModelAuthentication');
    expect(history).toContain('Incorrect API key provided:');
  });

  test('the model endpoint answers 500 with a plain-text body echoing every request header', async () => {
    const id = conversation('model-500', [
      (request) => ({
        error: {
          status: 500,
          headers: { 'x-should-retry': 'false' },
          body: `upstream failed; the request was ${JSON.stringify(request.headers)}`,
        },
      }),
    ]);
    const run = await ask(id, 'Hello?');
    expect(run.code).toBe(ExitCode.TurnFailed);
    const { history } = await collect(id);
    expect(history).toContain('upstream failed; the request was');
  });

  test('a streamed model answer that quotes the secrets', async () => {
    const answer =
      `Your key is ${secrets.openaiKey}, the warehouse password ${secrets.workerPassword}, the MCP token ` +
      `${secrets.mcpVariable}; send Authorization: Bearer ${secrets.strayBearer} to get in.`;
    const id = conversation('answer', [{ content: answer, chunkDelayMs: 40 }]);
    const run = await ask(id, 'What are my secrets?');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Your key is ${OPENAI_API_KEY}, the warehouse password ${WAREHOUSE_PASSWORD}');
    const { stream } = await collect(id);
    const deltas = stream.filter((event) => event.type === 'text_delta');
    expect(deltas.length).toBeGreaterThan(1);
  });

  test('a stdio MCP tool that answers with its environment and arguments', async () => {
    const id = conversation('tool-environment', [
      { toolCalls: [{ name: 'leaky__environment', arguments: {} }] },
      { content: 'Listed.' },
    ]);
    expect((await ask(id, 'Show the environment.')).code).toBe(0);
    const { history } = await collect(id);
    expect(history).toContain('my environment:');
    // Redacted with the labels that say what each value was (the result's text is JSON inside JSON here).
    expect(history).toContain('API_KEY\\":\\"${DA_SECRET}');
    expect(history).toContain('SERVICE_TOKEN\\":\\"[env SERVICE_TOKEN]');
  });

  test('a stdio MCP tool that reports its environment as progress (heartbeat details)', async () => {
    const id = conversation('tool-progress', [
      { toolCalls: [{ name: 'leaky__progress', arguments: {} }] },
      { content: 'Done.' },
    ]);
    const asking = ask(id, 'Work.');
    const handle = env.client.workflow.getHandle(conversationWorkflowId(id));
    const heartbeats: unknown[] = [];
    await expect
      .poll(
        async () => {
          const description = await handle.describe().catch(() => undefined);
          for (const activity of description?.raw.pendingActivities ?? []) {
            if (activity.heartbeatDetails) heartbeats.push(activity.heartbeatDetails);
          }
          return allText(heartbeats);
        },
        { timeout: 30_000, interval: 100 },
      )
      .toContain('working with');
    expect((await asking).code).toBe(0);
    found.set(`heartbeats of ${id}`, allText(heartbeats));
    await collect(id);
  });

  test('a stdio MCP server that prints its environment as it crashes in a call', async () => {
    const id = conversation('tool-crash', [
      { toolCalls: [{ name: 'leaky__crash', arguments: {} }] },
      { content: 'It crashed.' },
    ]);
    expect((await ask(id, 'Crash.')).code).toBe(0);
    const { history } = await collect(id);
    expect(history).toContain('crashing with');
  });

  test('HTTP MCP servers that answer 401 and 500 echoing our headers are named unavailable', async () => {
    const id = conversation('http-servers', [{ content: 'No tools today.' }]);
    expect((await ask(id, 'Which tools?')).code).toBe(0);
    const { history } = await collect(id);
    expect(history).toContain('rejected our credentials (HTTP 401)');
    expect(history).toContain('yourHeaders');
  });

  test('an HTTP MCP server that starts answering 500 with our headers between the listing and the call', async () => {
    const id = conversation('http-call', [
      () => {
        // The turn listed the server's tools with this request; its tool call gets the error.
        revocable.reject(500);
        return { toolCalls: [{ name: 'revocable__echo', arguments: { text: 'hello' } }] };
      },
      { content: 'The server failed.' },
    ]);
    await ask(id, 'Echo hello.');
    const { history } = await collect(id);
    expect(history).toContain('ToolTransportError');
    expect(history).toMatch(/MCP server \\?"revocable\\?"[^]*yourHeaders/);
  });

  test('configuration errors that quote a credential', async () => {
    const badModelUrl = await runCli(['worker'], {
      ...cliEnv,
      OPENAI_BASE_URL: `ftp://apikey:${secrets.urlPassword}@models.example/v1`,
    });
    expect(badModelUrl.code).toBe(ExitCode.Usage);
    expect(badModelUrl.stderr).toContain('Invalid OPENAI_BASE_URL=');
    found.set('CLI output of a bad OPENAI_BASE_URL', `${badModelUrl.stdout}\n${badModelUrl.stderr}`);
    const badAddress = await runCli(['ask', 'hello'], {
      ...cliEnv,
      TEMPORAL_ADDRESS: `https://robot:${secrets.urlPassword}@temporal.example:7233`,
    });
    expect(badAddress.code).toBe(ExitCode.Usage);
    expect(badAddress.stderr).toContain('Invalid TEMPORAL_ADDRESS=');
    found.set('CLI output of a bad TEMPORAL_ADDRESS', `${badAddress.stdout}\n${badAddress.stderr}`);
  });

  test('no canary in any history, stream event, heartbeat, CLI output or the worker log', () => {
    found.set('worker log', worker.output());
    // The failures were logged, so the log was looked at where they are.
    expect(worker.output()).toContain('Activity failed');
    expect(found.size).toBeGreaterThan(15);
    const leaks: string[] = [];
    for (const [where, text] of found) {
      for (const [name, secret] of Object.entries(secrets)) {
        for (const excerpt of occurrences(text, secret)) leaks.push(`${name} in ${where}: …${excerpt}…`);
      }
    }
    expect(leaks).toEqual([]);
  });
});
