import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startDevServer, type RunningDevServer } from '../../src/temporal-servers/dev-server-process.js';
import { findFreePort, resolveDevServer } from '../../src/temporal-servers/index.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';

/**
 * `durable-agent dev` starts its server with eager activities on, and so does the testing kit's
 * `createLocalEnvironment`, so a workflow task's completion brings back the model and tool calls it scheduled. Proof that they came that way: a second worker polls the same task queue for the same
 * activity types and would take about half of the tasks that went through matching. It takes none.
 */

const TOOL_ROUNDS = 8;

interface Started {
  env: TestWorkflowEnvironment;
  /** The server's address, for the second worker's connection. */
  address: string;
  stop: () => Promise<void>;
}

/** The dev server exactly as `durable-agent dev` starts it. */
async function devCommandServer(): Promise<Started> {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-eager-'));
  const config = loadConfig({
    DURABLE_AGENT_DATA_DIR: path.join(directory, 'data'),
    DURABLE_AGENT_DEV_PORT: String(await findFreePort()),
    DURABLE_AGENT_UI_PORT: String(await findFreePort()),
  });
  let server: RunningDevServer | undefined;
  try {
    const provisioned = await resolveDevServer(config);
    if (provisioned.kind !== 'path') throw new Error(`The dev server is not provisioned: ${provisioned.reason}`);
    server = await startDevServer(provisioned.path, config);
    const env = await TestWorkflowEnvironment.createFromExistingServer({
      address: server.address,
      namespace: config.temporal.namespace,
    });
    const running = server;
    return {
      env,
      address: server.address,
      stop: async () => {
        await env.teardown();
        await running.stop();
        rmSync(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await server?.stop();
    rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}

/** The testing kit's dev server, as an agent's own tests start it. */
async function testingKitServer(): Promise<Started> {
  const env = await createLocalEnvironment();
  return { env, address: env.address, stop: () => env.teardown() };
}

describe.each([
  { name: 'the dev server of durable-agent dev', start: devCommandServer },
  { name: "the testing kit's createLocalEnvironment", start: testingKitServer },
])('eager activities on $name', ({ start }) => {
  let started: Started | undefined;
  let crm: Crm | undefined;
  let agent: TestAgent | undefined;

  beforeAll(async () => {
    started = await start();
    crm = await startCrm();
    agent = await startTestAgent({
      env: started.env,
      mcpServers: [crm.config()],
      // One tool call a round, so that each workflow task schedules one activity (eager dispatch takes up to three).
      script: (request) => {
        const toolResults = request.messages.filter((message) => message.role === 'tool').length;
        return toolResults < TOOL_ROUNDS
          ? { toolCalls: [{ name: 'crm__find_user', arguments: { name: 'Ada' } }] }
          : { content: 'done' };
      },
    });
  });

  afterAll(async () => {
    await agent?.close();
    await crm?.close();
    await started?.stop();
  });

  test('every model and tool call of a turn runs on the worker whose workflow task scheduled it, none on a second worker polling the queue', async () => {
    const taken: string[] = [];
    const refuse = (activityType: string) => () => {
      taken.push(activityType);
      throw ApplicationFailure.retryable(`${activityType} reached the activity-only worker through matching`);
    };
    // A connection of its own, as another worker process would have (sdk-core refuses two workers of one queue on one).
    const connection = await NativeConnection.connect({ address: started!.address });
    const otherWorker = await Worker.create({
      connection,
      namespace: started!.env.namespace ?? 'default',
      taskQueue: agent!.taskQueue,
      activities: { callModel: refuse('callModel'), callTool: refuse('callTool') },
    });
    const otherRun = otherWorker.run();
    try {
      const result = await agent!.ask('Look Ada up, again and again.');
      expect(result.answer).toBe('done');
      expect(agent!.model.requests).toHaveLength(TOOL_ROUNDS + 1);
    } finally {
      otherWorker.shutdown();
      await otherRun;
      await connection.close();
    }
    expect(taken).toEqual([]);
  });
});
