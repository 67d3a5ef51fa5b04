import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { runMain, serveContender, WorkClock, type ContenderDriver } from '../harness.js';
import { stepsOf } from '../workload.js';
import { parseContenderArguments, type ContenderConfig } from './config.js';
import { createFloorActivities } from './floor-activities.js';
import { floorWorkflow } from './floor-workflow.js';
import { replayOnColdWorker } from './replay.js';
import { installQuietRuntime, quietBundlerLogger } from './runtime.js';

const workflowsPath = fileURLToPath(new URL('./floor-workflow.js', import.meta.url));

/** The raw Temporal floor: a workflow of no-op activities, as many as the turn has steps. No model, no tool. */
async function createFloorDriver(config: ContenderConfig): Promise<ContenderDriver> {
  const clock = new WorkClock();
  const nativeConnection = await NativeConnection.connect({ address: config.address });
  const connection = await Connection.connect({ address: config.address });
  const client = new Client({ connection, namespace: config.namespace });
  const worker = await Worker.create({
    connection: nativeConnection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath, logger: quietBundlerLogger }),
    activities: createFloorActivities((work) => clock.time(Context.current().info.workflowExecution?.workflowId, work)),
  });
  const running = worker.run();

  // Two processes of this contender may share a task queue (`--stack production`): their workflow ids must differ.
  const processTag = randomUUID().slice(0, 8);
  const run = async (workflowId: string, steps: number, modelDelayMs = 0, modelDelayMaxMs?: number) => {
    const handle = await client.workflow.start(floorWorkflow, {
      taskQueue: config.taskQueue,
      workflowId,
      args: modelDelayMaxMs === undefined ? [steps, modelDelayMs] : [steps, modelDelayMs, modelDelayMaxMs],
    });
    await handle.result();
    return handle.firstExecutionRunId;
  };

  return {
    async runTurn(conversation, spec) {
      const workflowId = `floor-${conversation}-${processTag}`;
      const runId = await run(workflowId, stepsOf(spec.chain), spec.modelDelayMs, spec.modelDelayMaxMs);
      return { workMs: clock.take(workflowId), execution: { workflowId, runId } };
    },
    async runConversation(conversation, turns) {
      const steps = turns.reduce((total, turn) => total + stepsOf(turn.chain), 0);
      const workflowId = `floor-${conversation}`;
      return { steps, execution: { workflowId, runId: await run(workflowId, steps) } };
    },
    drainWork: () => clock.drain(),
    async close() {
      try {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      } finally {
        await connection.close();
        await nativeConnection.close();
      }
    },
  };
}

async function main(): Promise<void> {
  installQuietRuntime();
  const parsed = parseContenderArguments(process.argv.slice(2));
  if (parsed.mode === 'replay') return replayOnColdWorker(parsed.config, workflowsPath);
  const { config } = parsed;
  await serveContender(() => createFloorDriver(config));
}

runMain(main);
