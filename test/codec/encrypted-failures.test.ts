import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Client } from '@temporalio/client';
import { ApplicationFailure, defaultPayloadConverter, type FailureConverter, type Payload } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableAgentClient, MessageRejectedError, UnknownApprovalError } from '../../src/client/index.js';
import { encryptionDataConverter } from '../../src/codec/data-converter.js';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import type { EncryptionKey } from '../../src/codec/keys.js';
import { loadConfig } from '../../src/config/index.js';
import { parseMcpConfig } from '../../src/worker/mcp/config.js';
import { FailureType } from '../../src/shared/errors.js';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startTestMcpServer, type RunningTestMcpServer } from '../../src/testing/mcp-test-server.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { ScriptStep, StepFunction } from '../../src/testing/scripted-model/script.js';
import { approveUpdate, conversationWorkflowId } from '../../src/workflows/definitions.js';
import { deliveredFailureText, machinePathsIn } from '../helpers/machine-paths.js';
import { allText, canary, historiesOfEveryRun, occurrences } from '../helpers/secrets.js';
import { startGate, type Gate } from '../mcp/helpers.js';
import { encodingOf, keyIdOf } from './history-payloads.js';
import { newKey } from './keys.js';

/**
 * Failures with encryption keys set (issue 19, the gap item 1 left): a tool's and a model provider's error text may
 * quote user data, so a failure's message and stack trace are encoded (Temporal's `encodeCommonAttributes`) and
 * encrypted like every other payload, while the workflow, the model and the client still read them through the codec.
 */

let env: TestWorkflowEnvironment;
let upstream: RunningTestMcpServer;
/** The MCP server, behind a gate a script step can make answer HTTP 500 with the server's own error text. */
let gate: Gate;
let model: ScriptedModel;
let agent: TestAgent;
let client: DurableAgentClient;
const key: EncryptionKey = newKey('failures-key');
const steps = new Map<string, Array<ScriptStep | StepFunction>>();

function conversation(name: string, script: Array<ScriptStep | StepFunction>): string {
  const id = `encrypted-failures-${name}-${randomUUID().slice(0, 8)}`;
  steps.set(conversationWorkflowId(id), script);
  return id;
}

beforeAll(async () => {
  env = await createLocalEnvironment();
  upstream = await startTestMcpServer({ transport: 'http', port: 0 });
  gate = await startGate(upstream.url);
  model = await startScriptedModel({
    script: async (request, { stepIndex }) => {
      const step = steps.get(request.conversation)?.[stepIndex];
      return typeof step === 'function' ? await step(request) : step;
    },
  });
  const mcpServers = parseMcpConfig(JSON.stringify({ mcpServers: { notes: { url: gate.url } } }), 'mcp.json', {});
  agent = await startTestAgent({
    env,
    model,
    mcpServers,
    taskQueue: `encrypted-failures-${randomUUID()}`,
    workerOptions: { encryptionKeys: [key] },
  });
  client = await DurableAgentClient.connect({
    temporal: { ...loadConfig({}).temporal, address: env.address },
    taskQueue: agent.taskQueue,
    encryptionKeys: [key],
  });
});

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await gate?.close();
  await upstream?.close();
  await model?.close();
  await env?.teardown();
});

interface RawFailure {
  message?: string | null;
  stackTrace?: string | null;
  encodedAttributes?: Payload | null;
  applicationFailureInfo?: { type?: string | null } | null;
}

/** The failures of the run's failed activities, as Temporal stores them. */
function activityFailures(history: unknown): RawFailure[] {
  const events = (history as { events?: Array<Record<string, unknown>> }).events ?? [];
  return events.flatMap((event) => {
    const failed = event.activityTaskFailedEventAttributes as { failure?: RawFailure } | null | undefined;
    return failed?.failure ? [failed.failure] : [];
  });
}

describe('failures with encryption keys set', () => {
  it("the data converter names the failure converter that moves a failure's message into a payload, only with keys", () => {
    // Without keys: the message stays plain; no stack trace either way.
    const plainPath = encryptionDataConverter([]).failureConverterPath!;
    const plain = (createRequire(import.meta.url)(plainPath) as { failureConverter: FailureConverter })
      .failureConverter;
    const refusal = ApplicationFailure.create({ type: FailureType.InvalidMessage, message: 'Refused: too long' });
    expect(plain.errorToFailure(refusal, defaultPayloadConverter)).toMatchObject({
      message: 'Refused: too long',
      stackTrace: '',
    });
    const path = encryptionDataConverter([key]).failureConverterPath!;
    // As Temporal loads it: require() by path.
    const { failureConverter } = createRequire(import.meta.url)(path) as { failureConverter: FailureConverter };
    const secret = canary('refusal');
    const error = ApplicationFailure.create({ type: FailureType.InvalidMessage, message: `Refused: ${secret}` });
    const failure = failureConverter.errorToFailure(error, defaultPayloadConverter);
    expect(failure).toMatchObject({ message: 'Encoded failure', stackTrace: '' });
    expect(failure.applicationFailureInfo?.type).toBe(FailureType.InvalidMessage);
    expect(allText(failure.encodedAttributes)).toContain(secret);
    const back = failureConverter.failureToError(failure, defaultPayloadConverter);
    expect(back).toBeInstanceOf(ApplicationFailure);
    expect(back).toMatchObject({ type: FailureType.InvalidMessage, message: `Refused: ${secret}` });
  });

  it('a failing tool and a failing model call leave no error text in any event; the model and the turn read it', async () => {
    const toolError = canary('tool-error');
    const modelError = canary('model-error');
    const id = conversation('scan', [
      () => {
        // The turn listed the tools through the open gate; the call gets the server's error page.
        gate.reject(500, JSON.stringify({ error: `the notes store refused: ${toolError}` }));
        return { toolCalls: [{ name: 'notes__echo', arguments: { text: 'hello' } }] };
      },
      () => {
        gate.reject(undefined);
        return { content: 'The notes tool is down.' };
      },
      { error: { status: 400, body: { error: { message: `unsupported input: ${modelError}`, type: 'bad' } } } },
    ]);
    const workflowId = conversationWorkflowId(id);

    const first = await client.ask(id, 'Echo hello.', { settings: { toolAttempts: 1 } });
    expect(first).toMatchObject({ stopReason: 'completed', answer: 'The notes tool is down.' });
    // The workflow read the tool activity's failure message (decoded) and told the model in the tool message.
    const afterTool = model.requestsFor(workflowId)[1]!;
    const toolMessage = afterTool.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toContain('is unavailable right now');
    expect(toolMessage?.content).toContain(toolError);

    const second = await client.ask(id, 'Once more.');
    expect(second).toMatchObject({ stopReason: `error:${FailureType.ModelBadRequest}`, answer: null });
    expect(second.error?.message).toContain(modelError);

    // Every event of every run, as Temporal stores it: neither error text, in any message, stack trace or payload.
    const { runId } = await env.client.workflow.getHandle(workflowId).describe();
    const runs = await historiesOfEveryRun(env.client, workflowId, runId);
    const stored = allText(runs.map((run) => run.history));
    expect(occurrences(stored, toolError)).toEqual([]);
    expect(occurrences(stored, modelError)).toEqual([]);

    // The failures say only "Encoded failure"; their types stay plain (durable-agent reads them); the message and
    // stack trace are in an encrypted payload that decrypts with the key.
    const failures = runs.flatMap((run) => activityFailures(run.history));
    expect(failures.map((failure) => failure.applicationFailureInfo?.type).sort()).toEqual([
      FailureType.ModelBadRequest,
      FailureType.ToolTransportError,
    ]);
    for (const failure of failures) {
      expect(failure).toMatchObject({ message: 'Encoded failure', stackTrace: '' });
      expect(encodingOf(failure.encodedAttributes!)).toBe('binary/encrypted');
      expect(keyIdOf(failure.encodedAttributes!)).toBe(key.id);
    }
    const decrypted = allText(
      await new EncryptionCodec([key]).decode(failures.map((failure) => failure.encodedAttributes!)),
    );
    expect(decrypted).toContain(toolError);
    expect(decrypted).toContain(modelError);
    expect(decrypted).toContain('stack_trace');

    // Replay with the worker's data converter and its workflow bundle (failure converter included).
    const workflowBundle = await bundleWorkflows({ encodeFailures: true });
    for (const run of runs) {
      await expect(
        Worker.runReplayHistory(
          { workflowBundle, dataConverter: encryptionDataConverter([key]) },
          run.history,
          workflowId,
        ),
      ).resolves.toBeUndefined();
    }
  });

  it("the conversation's refusals reach the client as named errors with their reasons; without the codec, ciphertext", async () => {
    const id = conversation('refusals', [{ content: 'ok' }]);
    await client.ask(id, 'hello', { settings: { maxMessageChars: 10 } });

    // The running conversation's validator refuses these; its reasons come back through the codec.
    const long = await client.ask(id, 'x'.repeat(11)).catch((failure: unknown) => failure);
    expect(long).toBeInstanceOf(MessageRejectedError);
    expect((long as MessageRejectedError).reason).toMatch(/11 characters; the limit is 10/);
    // Decrypted, the refusal carries no stack naming the worker's files.
    expect(deliveredFailureText(long)).toMatch(/11 characters; the limit is 10/);
    expect(machinePathsIn(deliveredFailureText(long))).toEqual([]);
    const unknown = await client.approve(id, 'call_nope').catch((failure: unknown) => failure);
    expect(unknown).toBeInstanceOf(UnknownApprovalError);
    expect((unknown as UnknownApprovalError).message).toMatch(/No tool call call_nope waits for approval/);
    expect((await client.status(id)).turns).toBe(1);

    // The Temporal SDK's own client (no codec) gets the refusal with its message encrypted: it cannot read it.
    const raw = new Client({ connection: env.connection });
    await expect(
      raw.workflow
        .getHandle(conversationWorkflowId(id))
        .executeUpdate(approveUpdate, { args: [{ callId: 'call_nope' }] }),
    ).rejects.toThrow(/binary\/encrypted/);
    await client.end(id);
  });
});
