import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startTestAgent, type TestAgent } from '../../src/testing/agent.js';
import { startDevServer, type RunningDevServer } from '../../src/temporal-servers/dev-server-process.js';
import { findFreePort, resolveDevServer } from '../../src/temporal-servers/index.js';
import { startCrm, type Crm } from '../helpers/crm-server.js';

/**
 * `durable-agent dev` starts its server with eager activities on, so a workflow task's completion brings back the model
 * and tool calls it scheduled. Proof that they came that way: a second worker polls the same task queue for the same
 * activity types and would take about half of the tasks that went through matching. It takes none.
 */

const TOOL_ROUNDS = 8;
const directory = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-eager-'));

let server: RunningDevServer | undefined;
let env: TestWorkflowEnvironment | undefined;
let crm: Crm | undefined;
let agent: TestAgent | undefined;

beforeAll(async () => {
  const config = loadConfig({
    DURABLE_AGENT_DATA_DIR: path.join(directory, 'data'),
    DURABLE_AGENT_DEV_PORT: String(await findFreePort()),
    DURABLE_AGENT_UI_PORT: String(await findFreePort()),
  });
  const provisioned = await resolveDevServer(config);
  if (provisioned.kind !== 'path') throw new Error(`The dev server is not provisioned: ${provisioned.reason}`);
  server = await startDevServer(provisioned.path, config);
  env = await TestWorkflowEnvironment.createFromExistingServer({
    address: server.address,
    namespace: config.temporal.namespace,
  });
  crm = await startCrm();
  agent = await startTestAgent({
    env,
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
  await env?.teardown();
  await server?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe('eager activities on the dev server of durable-agent dev', () => {
  test('every model and tool call of a turn runs on the worker whose workflow task scheduled it, none on a second worker polling the queue', async () => {
    const taken: string[] = [];
    const refuse = (activityType: string) => () => {
      taken.push(activityType);
      throw ApplicationFailure.retryable(`${activityType} reached the activity-only worker through matching`);
    };
    // A connection of its own, as another worker process would have (sdk-core refuses two workers of one queue on one).
    const connection = await NativeConnection.connect({ address: server!.address });
    const otherWorker = await Worker.create({
      connection,
      namespace: env!.namespace ?? 'default',
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
