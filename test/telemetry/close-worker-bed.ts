import { rmSync } from 'node:fs';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Telemetry } from '../../src/worker/telemetry/index.js';
import type { ScriptedModel } from '../../src/testing/scripted-model/index.js';
import type { OtlpReceiver } from '../helpers/otlp-receiver.js';
import { killLeftovers, type WorkerProcess } from '../reliability/helpers.js';

/** What a telemetry test with worker processes starts; any part may be missing when its start failed. */
export interface WorkerBed {
  workers: readonly (WorkerProcess | undefined)[];
  counterFile: string;
  env: TestWorkflowEnvironment | undefined;
  model: ScriptedModel | undefined;
  telemetry: Telemetry | undefined;
  receiver: OtlpReceiver | undefined;
  tmp: string;
}

/** Stop it all, the workers first (they export to the receiver until they stop) and the receiver last. */
export async function closeWorkerBed(bed: WorkerBed): Promise<void> {
  const started = bed.workers.filter((worker) => worker !== undefined);
  await Promise.allSettled(started.map((worker) => worker.stop(5_000)));
  killLeftovers([bed.counterFile]);
  await bed.env?.teardown();
  await bed.model?.close();
  await bed.telemetry?.tracing?.shutdown();
  await bed.receiver?.close();
  rmSync(bed.tmp, { recursive: true, force: true });
}
