import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DurableAgentClient } from '../../src/client/index.js';
import { workerDataConverter } from '../../src/codec/data-converter.js';
import { EncryptionKeyNotFoundError, PayloadDecryptionError } from '../../src/shared/encryption-errors.js';
import { formatEncryptionKeys, type EncryptionKey } from '../../src/codec/keys.js';
import { loadConfig } from '../../src/config/index.js';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { droppedSignalPatchId } from '../../src/workflows/undecodable-guard.js';
import { cliPath, killAll, runCli, spawnTracked } from '../cli/helpers.js';
import { poll, ScriptBook } from '../client/helpers.js';
import { readEvents } from '../bridge/sse.js';
import { canary } from '../helpers/secrets.js';
import { newKey } from './keys.js';

/**
 * A client whose keys do not match the worker's, on a live conversation (dev server, encrypted worker): its signal is
 * dropped with a logged reason, its update and query are refused with an error naming the key id and saying what to
 * do, and the conversation goes on for correctly keyed clients. Before, the worker failed the workflow task over and
 * over on the payload it could not decrypt, and the conversation was wedged for everyone.
 */

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let agent: TestAgent;
let client: DurableAgentClient;
const book = new ScriptBook('wrong-keys');
const workerKey = newKey('worker-key');
const clients: DurableAgentClient[] = [];

beforeAll(async () => {
  env = await createLocalEnvironment();
  model = await startScriptedModel({ script: book.script });
  agent = await startTestAgent({
    env,
    model,
    taskQueue: `wrong-keys-${randomUUID()}`,
    workerOptions: { encryptionKeys: [workerKey] },
  });
  client = await clientWith([workerKey]);
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await killAll();
  await Promise.allSettled(clients.map((each) => each.close()));
  await agent?.close();
  await model?.close();
  await env?.teardown();
});

async function clientWith(keys: EncryptionKey[]): Promise<DurableAgentClient> {
  const connected = await DurableAgentClient.connect({
    temporal: { ...loadConfig({}).temporal, address: env.address },
    taskQueue: agent.taskQueue,
    encryptionKeys: keys,
  });
  clients.push(connected);
  return connected;
}

const cliEnv = (keys: EncryptionKey[]) => ({
  ...process.env,
  TEMPORAL_ADDRESS: env.address,
  DURABLE_AGENT_TASK_QUEUE: agent.taskQueue,
  DURABLE_AGENT_ENCRYPTION_KEYS: formatEncryptionKeys(keys),
});

type HistoryEvent = Record<string, unknown> & { eventType?: unknown };

async function eventsOf(conversationId: string): Promise<HistoryEvent[]> {
  const history = await env.client.workflow.getHandle(conversationWorkflowId(conversationId)).fetchHistory();
  return (history.events ?? []) as unknown as HistoryEvent[];
}

const named = (events: HistoryEvent[], attributes: string) => events.filter((event) => event[attributes] != null);

/** The ids of the patch markers recorded in `events`. */
function patchIds(events: HistoryEvent[]): string[] {
  return named(events, 'markerRecordedEventAttributes').flatMap((event) => {
    const marker = event.markerRecordedEventAttributes as {
      markerName?: string;
      details?: Record<string, { payloads?: Array<{ data?: Uint8Array }> }>;
    };
    if (marker.markerName !== 'core_patch') return [];
    const data = marker.details?.['patch-data']?.payloads?.[0]?.data;
    return [(JSON.parse(Buffer.from(data ?? []).toString('utf8')) as { id: string }).id];
  });
}

const cases = [
  {
    name: 'another key id',
    wrongKey: newKey('client-key'),
    workerRefusal: EncryptionKeyNotFoundError,
    workerExplains: /key id "client-key", which is not among the worker's keys \("worker-key"\)/,
    // The client cannot read the worker's answers either: it has no key under the worker's id.
    clientError: EncryptionKeyNotFoundError,
  },
  {
    name: 'the same key id with other key bytes',
    wrongKey: newKey('worker-key'),
    workerRefusal: PayloadDecryptionError,
    workerExplains: /key id "worker-key", but the worker's key under that id is another key/,
    clientError: PayloadDecryptionError,
  },
];

describe.each(cases)('a client with $name', ({ wrongKey, workerRefusal, workerExplains, clientError }) => {
  it('is refused (update, query) or dropped (signal) with the key id named; the conversation goes on for everyone else', async () => {
    const id = book.conversation('live', [{ content: 'first answer' }, { content: 'second answer' }]);
    expect(await client.ask(id, 'hello')).toMatchObject({ turn: 1, answer: 'first answer' });
    const wrong = await clientWith([wrongKey]);
    const logged: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
      logged.push(String(chunk));
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    });

    // Signal: Temporal records it; the worker drops it with a warning and records the drop.
    const signalled = canary('signalled');
    await wrong.send(id, signalled);
    // The model activity's stream signal of the first turn was the run's first signal; this one is its second.
    const patches = await poll(
      async () => patchIds(await eventsOf(id)),
      (ids) => ids.length > 0,
      { attempts: 150 },
    );
    expect(patches).toEqual([droppedSignalPatchId(2)]);
    await poll(
      async () => logged.join(''),
      (text) => /dropped a signal the worker could not decrypt/.test(text),
      { attempts: 50 },
    );
    const warning = logged.find((line) => line.includes('dropped a signal the worker could not decrypt'))!;
    expect(warning).toContain(wrongKey.id);
    expect(warning).toMatch(workerExplains);

    // Update: rejected by validation, with the worker's explanation; nothing is recorded.
    const asked = canary('asked');
    const refused = await wrong.ask(id, asked, { waitTimeoutMs: 20_000 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(workerRefusal);
    expect(refused).toMatchObject({ keyId: wrongKey.id, side: 'worker' });
    expect((refused as Error).message).toMatch(workerExplains);
    expect((refused as Error).message).toMatch(/Give this client the worker's keys \(DURABLE_AGENT_ENCRYPTION_KEYS/);

    // Query with an argument (the transcript): refused the same way.
    const read = await wrong.transcript(id).catch((error: unknown) => error);
    expect(read).toBeInstanceOf(workerRefusal);
    expect((read as Error).message).toMatch(workerExplains);
    // Query without one (the status): the worker answers, and this client cannot decrypt the answer: named too.
    const status = await wrong.status(id).catch((error: unknown) => error);
    expect(status).toBeInstanceOf(clientError);
    expect(status).toMatchObject({ keyId: workerKey.id, side: 'here' });

    // A correctly keyed client: the conversation answers, and nothing of the wrong client's is in it.
    expect(await client.ask(id, 'again')).toMatchObject({ turn: 2, answer: 'second answer' });
    const transcript = (await client.fullTranscript(id)).map((message) => message.content);
    expect(transcript).toEqual(['hello', 'first answer', 'again', 'second answer']);
    const events = await eventsOf(id);
    expect(named(events, 'workflowTaskFailedEventAttributes')).toEqual([]);
    expect(named(events, 'workflowExecutionUpdateAcceptedEventAttributes')).toHaveLength(2);

    // Replay takes the same path; also once the worker has the client's key, which decrypts the dropped signal now.
    const workflowBundle = await bundleWorkflows({ encodeFailures: true });
    const history = await env.client.workflow.getHandle(conversationWorkflowId(id)).fetchHistory();
    const keySets = wrongKey.id === workerKey.id ? [[workerKey]] : [[workerKey], [workerKey, wrongKey]];
    for (const keys of keySets) {
      await expect(
        Worker.runReplayHistory(
          { workflowBundle, dataConverter: workerDataConverter(keys) },
          history,
          conversationWorkflowId(id),
        ),
      ).resolves.toBeUndefined();
    }
  });

  it('the CLI names the key id and what to do, exit code 2, never "Encoded failure"; the right keys still read it', async () => {
    const id = book.conversation('cli', [{ content: 'only answer' }]);
    expect(await client.ask(id, 'hello')).toMatchObject({ turn: 1, answer: 'only answer' });
    for (const args of [
      ['history', '-c', id],
      ['ask', '-c', id, '--timeout', '20', canary('cli-asked')],
    ]) {
      const run = await runCli(args, cliEnv([wrongKey]));
      expect(run.stderr).not.toMatch(/Encoded failure/);
      expect(run.stderr).toMatch(workerExplains);
      expect(run.stderr).toMatch(/Give this client the worker's keys \(DURABLE_AGENT_ENCRYPTION_KEYS/);
      expect(run.code, run.stderr).toBe(2);
    }
    const { stdout, code } = await runCli(['history', '-c', id], cliEnv([workerKey]));
    expect(code).toBe(0);
    expect(stdout).toContain('only answer');
    expect(named(await eventsOf(id), 'workflowTaskFailedEventAttributes')).toEqual([]);
  });
  it('durable-agent serve passes the refusal on: in the event stream, and named on a route', async () => {
    const id = book.conversation('serve', [{ content: 'served answer' }]);
    await client.ask(id, 'hello');
    const serve = spawnTracked(process.execPath, [cliPath, 'serve', '--port', '0'], cliEnv([wrongKey]));
    try {
      const url = await poll(
        async () => /^(http:\/\/\S+)\n/.exec(serve.output())?.[1],
        (found) => found !== undefined,
        { attempts: 400, intervalMs: 50 },
      );
      const messages = await readEvents(`${url}/conversations/${id}/events?from=0`, (m) => m.event === 'stream_error');
      const streamError = messages.find((message) => message.event === 'stream_error');
      expect((JSON.parse(streamError!.data) as { message: string }).message).toMatch(workerExplains);
      const approval = await fetch(`${url}/conversations/${id}/approvals/call_1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve' }),
      });
      expect(approval.status).toBe(500);
      const { error } = (await approval.json()) as { error: { type: string; message: string } };
      expect(error.type).toBe(workerRefusal.name);
      expect(error.message).toMatch(workerExplains);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
