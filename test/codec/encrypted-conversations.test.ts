import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient, subscribe } from '../../src/client/index.js';
import { encryptionDataConverter } from '../../src/codec/data-converter.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { EncryptionKeyNotFoundError } from '../../src/shared/encryption-errors.js';
import { formatEncryptionKeys, type EncryptionKey } from '../../src/codec/keys.js';
import { loadConfig } from '../../src/config/index.js';
import { parseMcpConfig } from '../../src/worker/mcp/config.js';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { ScriptStep } from '../../src/testing/scripted-model/script.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import type { StreamEvent } from '../../src/workflows/stream-events.js';
import { cliPath, killAll, runCli, spawnTracked } from '../cli/helpers.js';
import { ScriptBook } from '../client/helpers.js';
import { allText, canary, occurrences } from '../helpers/secrets.js';
import { encodingOf, keyIdOf, payloadsIn } from './history-payloads.js';
import { newKey } from './keys.js';

/**
 * Conversations with encryption keys set (issue 19, item 1), on a real dev server with a real worker, MCP server and
 * the scripted model: nothing a user, a tool or the model said is readable in any payload of any event of any run,
 * while the client, streaming and replay work as before, and keys rotate across continue-as-new.
 */

let env: TestWorkflowEnvironment;
let mcp: RunningTestMcpServer;
// One scripted model for every agent here: its cursors (one per conversation) outlive a worker that is replaced.
let model: ScriptedModel;
const book = new ScriptBook('encrypted');
const keyA = newKey('key-a');
const keyB = newKey('key-b');
const agents: TestAgent[] = [];
const clients: DurableAgentClient[] = [];

beforeAll(async () => {
  env = await createLocalEnvironment();
  mcp = await startTestMcpServer({ transport: 'http', port: 0 });
  model = await startScriptedModel({ script: book.script });
});

afterAll(async () => {
  await killAll();
  await Promise.allSettled(clients.map((client) => client.close()));
  await Promise.allSettled(agents.map((agent) => agent.close()));
  await mcp?.close();
  await model?.close();
  await env?.teardown();
});

async function agentWith(keys: EncryptionKey[]): Promise<TestAgent> {
  const mcpServers = parseMcpConfig(JSON.stringify({ mcpServers: { notes: { url: mcp.url } } }), 'mcp.json', {});
  const agent = await startTestAgent({
    env,
    model,
    mcpServers,
    taskQueue: `encrypted-${randomUUID()}`,
    workerOptions: { encryptionKeys: keys },
  });
  agents.push(agent);
  return agent;
}

async function clientWith(keys: EncryptionKey[], taskQueue: string): Promise<DurableAgentClient> {
  const client = await DurableAgentClient.connect({
    temporal: { ...loadConfig({}).temporal, address: env.address },
    taskQueue,
    encryptionKeys: keys,
  });
  clients.push(client);
  return client;
}

/** A turn that calls the echo tool with `toolText`, then answers `answer`. */
const toolTurn = (toolText: string, answer: string): ScriptStep[] => [
  { toolCalls: [{ name: 'notes__echo', arguments: { text: toolText } }] },
  { content: answer },
];

describe('with encryption keys set', () => {
  it('no user message, tool argument, tool result or answer appears in any payload of any event of any run', async () => {
    const agent = await agentWith([keyA]);
    const client = await clientWith([keyA], agent.taskQueue);
    const canaries = Array.from({ length: 2 }, (_, turn) => ({
      message: canary(`message-${turn + 1}`),
      tool: canary(`tool-${turn + 1}`),
      answer: canary(`answer-${turn + 1}`),
    }));
    const id = book.conversation('scan', [
      ...toolTurn(canaries[0]!.tool, canaries[0]!.answer),
      ...toolTurn(canaries[1]!.tool, canaries[1]!.answer),
    ]);

    // Streaming works through the codec: the subscriber reads every turn's answer as the model streamed it.
    const controller = new AbortController();
    const finished: Extract<StreamEvent, { type: 'turn_finished' }>[] = [];
    const subscription = (async () => {
      for await (const event of subscribe(client.client, id, { signal: controller.signal, from: 0 })) {
        if (event.type === 'turn_finished') finished.push(event);
        if (finished.length === 2) return;
      }
    })();
    try {
      for (const [turn, words] of canaries.entries()) {
        // One turn per run: the second turn runs after a continue-as-new that carries the first one's state.
        const result = await client.ask(id, words.message, { settings: { maxTurnsPerRun: 1 } });
        expect(result).toMatchObject({ turn: turn + 1, answer: words.answer, stopReason: 'completed' });
      }
      await subscription;
    } finally {
      controller.abort();
      await subscription;
    }
    expect(finished.map((event) => event.answer)).toEqual(canaries.map((words) => words.answer));

    // The client reads the whole transcript across the runs, decrypted.
    const transcript = allText(await client.fullTranscript(id));
    for (const words of canaries) for (const text of Object.values(words)) expect(transcript).toContain(text);
    expect(model.requests.filter((request) => request.conversation === conversationWorkflowId(id)).length).toBe(4);

    // Every event of every run, its payloads as Temporal stores them.
    const runs = await everyRun(id);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const stored = allText(runs.map((run) => run.history));
    for (const words of canaries) {
      for (const text of Object.values(words)) expect(occurrences(stored, text)).toEqual([]);
    }
    const payloads = runs.flatMap((run) => payloadsIn(run.history));
    const encrypted = payloads.filter((payload) => encodingOf(payload) === 'binary/encrypted');
    // Each run has its input, signals or updates, activity inputs and results, all encrypted with key A.
    expect(encrypted.length).toBeGreaterThan(20);
    expect(new Set(encrypted.map(keyIdOf))).toEqual(new Set(['key-a']));
    // The scan would have found them: decrypted, the same payloads hold every canary.
    const decrypted = allText(await new EncryptionCodec([keyA]).decode(encrypted));
    for (const words of canaries) for (const text of Object.values(words)) expect(decrypted).toContain(text);
    // The activity summaries the Web UI shows are user metadata payloads: encrypted too (docs/security.md).
    expect(stored).not.toContain('turn 1 · tool notes__echo');
    expect(decrypted).toContain('turn 1 · tool notes__echo');
    // What stays plain is metadata: the search attributes, and no payload that is not encrypted carries content.
    const plain = payloads.filter((payload) => encodingOf(payload) !== 'binary/encrypted');
    expect(new Set(plain.map(encodingOf))).toEqual(new Set(['json/plain']));

    // Replay of the recorded encrypted histories with the worker's data converter.
    const workflowBundle = await bundleWorkflows();
    for (const run of runs) {
      await expect(
        Worker.runReplayHistory(
          { workflowBundle, dataConverter: encryptionDataConverter([keyA]) },
          run.history,
          conversationWorkflowId(id),
        ),
      ).resolves.toBeUndefined();
    }
  });

  it('rotation across continue-as-new: turn 1 under key A; after rotating to B,A turn 2 runs, old runs stay readable', async () => {
    const first = await agentWith([keyA]);
    const id = book.conversation('rotate', [{ content: 'first answer' }, { content: 'second answer' }]);
    const before = await clientWith([keyA], first.taskQueue);
    expect(await before.ask(id, 'turn one', { settings: { maxTurnsPerRun: 1 } })).toMatchObject({
      turn: 1,
      answer: 'first answer',
    });
    await first.close();

    // The rotated worker and client: B encrypts, A still decrypts. Same task queue, so it picks up the new run.
    const rotated = await startTestAgent({
      env,
      model,
      taskQueue: first.taskQueue,
      workerOptions: { encryptionKeys: [keyB, keyA] },
    });
    agents.push(rotated);
    const after = await clientWith([keyB, keyA], first.taskQueue);
    expect(await after.ask(id, 'turn two', { settings: { maxTurnsPerRun: 1 } })).toMatchObject({
      turn: 2,
      answer: 'second answer',
    });
    const messages = (await after.fullTranscript(id)).map((message) => message.content);
    expect(messages).toEqual(['turn one', 'first answer', 'turn two', 'second answer']);

    const runs = await everyRun(id);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const keysOf = (history: unknown) =>
      new Set(
        payloadsIn(history)
          .filter((payload) => keyIdOf(payload) !== '')
          .map(keyIdOf),
      );
    expect(keysOf(runs[0]!.history)).toEqual(new Set(['key-a']));
    // The second run's input was written by the old worker (key A); everything after by the rotated one (key B).
    expect(keysOf(runs[1]!.history)).toContain('key-b');

    // The old run stays readable with the rotated keys (and replays with the rotated worker's data converter)...
    const oldPayloads = payloadsIn(runs[0]!.history).filter((payload) => keyIdOf(payload) !== '');
    expect(allText(await new EncryptionCodec([keyB, keyA]).decode(oldPayloads))).toContain('turn one');
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: await bundleWorkflows(), dataConverter: encryptionDataConverter([keyB, keyA]) },
        runs[0]!.history,
        conversationWorkflowId(id),
      ),
    ).resolves.toBeUndefined();
    // ...and not without key A: the error names the key id needed.
    const error = await new EncryptionCodec([keyB]).decode(oldPayloads).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EncryptionKeyNotFoundError);
    expect((error as EncryptionKeyNotFoundError).keyId).toBe('key-a');
    expect((error as Error).message).toMatch(/"key-a", which is not among the configured keys \("key-b"\)/);
  });

  it('a client with no keys, or only another key, fails to read a conversation by name, saying which key id it needs', async () => {
    const agent = await agentWith([keyA]);
    const id = book.conversation('missing-key', [{ content: 'a secret answer' }]);
    await (await clientWith([keyA], agent.taskQueue)).ask(id, 'hello');
    for (const [keys, problem] of [
      [[], /"key-a", but no encryption keys are configured here/],
      [[keyB], /"key-a", which is not among the configured keys \("key-b"\)/],
    ] as const) {
      const client = await clientWith([...keys], agent.taskQueue);
      const error = await client.status(id).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(EncryptionKeyNotFoundError);
      expect((error as Error).message).toMatch(problem);
    }
    // The Temporal SDK's own client (no codec) sees only ciphertext.
    const raw = new Client({ connection: env.connection });
    await expect(raw.workflow.getHandle(conversationWorkflowId(id)).query('status')).rejects.toThrow(
      /binary\/encrypted/,
    );
  });
  it('the CLI uses DURABLE_AGENT_ENCRYPTION_KEYS: ask and history work; without the key, the named error', async () => {
    const agent = await agentWith([keyA]);
    const secret = canary('cli-message');
    const answer = canary('cli-answer');
    const id = book.conversation('cli', [{ content: answer }]);
    const cliEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      DURABLE_AGENT_TASK_QUEUE: agent.taskQueue,
      DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys([keyA]),
    };
    const asked = await runCli(['ask', '-c', id, secret], cliEnv);
    expect(asked).toMatchObject({ code: 0, stdout: `${answer}\n` });
    const history = await runCli(['history', '-c', id], cliEnv);
    expect(history.code).toBe(0);
    expect(history.stdout).toContain(secret);
    expect(history.stdout).toContain(answer);
    const runs = await everyRun(id);
    expect(occurrences(allText(runs.map((run) => run.history)), secret)).toEqual([]);

    const withoutKey = await runCli(['history', '-c', id], { ...cliEnv, DURABLE_AGENT_ENCRYPTION_KEYS: '' });
    expect(withoutKey.code).not.toBe(0);
    expect(withoutKey.stderr).toMatch(/encrypted with the key id "key-a", but no encryption keys are configured here/);
    expect(withoutKey.stdout).not.toContain(secret);
  });
  it('durable-agent serve uses DURABLE_AGENT_ENCRYPTION_KEYS: a message posted over HTTP is answered in the event stream', async () => {
    const agent = await agentWith([keyA]);
    const secret = canary('serve-message');
    const answer = canary('serve-answer');
    const id = book.conversation('serve', [{ content: answer }]);
    const serveEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: env.address,
      DURABLE_AGENT_TASK_QUEUE: agent.taskQueue,
      DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys([keyA]),
    };
    const serve = spawnTracked(process.execPath, [cliPath, 'serve', '--port', '0'], serveEnv);
    try {
      let url: string | undefined;
      for (let attempt = 0; attempt < 400 && url === undefined; attempt++) {
        url = /^(http:\/\/\S+)\n/.exec(serve.output())?.[1];
        if (url === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(url, serve.output()).toBeDefined();
      const posted = await fetch(`${url}/conversations/${id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: secret }),
      });
      expect(posted.status).toBe(202);
      const stream = await fetch(`${url}/conversations/${id}/events?from=0`, {
        headers: { accept: 'text/event-stream' },
      });
      let text = '';
      const decoder = new TextDecoder();
      for await (const chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        if (/event: turn_finished\n/.test(text)) break;
      }
      expect(text).toMatch(new RegExp(`event: turn_finished\\n[^\\n]*data: [^\\n]*${answer}`));
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    const stored = allText((await everyRun(id)).map((run) => run.history));
    expect(occurrences(stored, secret)).toEqual([]);
    expect(occurrences(stored, answer)).toEqual([]);
  });
});

/** The raw history of every run of the conversation, oldest first: back from the latest through `continuedExecutionRunId`. */
async function everyRun(conversationId: string): Promise<Array<{ runId: string; history: unknown }>> {
  const workflowId = conversationWorkflowId(conversationId);
  const runs: Array<{ runId: string; history: unknown }> = [];
  let runId: string | undefined = (await env.client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history = await env.client.workflow.getHandle(workflowId, runId).fetchHistory();
    runs.unshift({ runId, history });
    runId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}
