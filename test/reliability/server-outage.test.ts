import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { findFreePort } from '../../src/temporal-servers/ports.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';
import { DevServerProcess, killLeftovers, requireBuild, type WorkerProcess } from './helpers.js';
import { expectNothingLost, outageScript, runOutage } from './outage.js';

/**
 * Part of `npm test` (about 30 s, most of it the outage): the Temporal server is down 15 s while a model call and a
 * side-effecting tool call finish, longer than sdk-core retries their completions (about 10 s) and than the calls'
 * heartbeat timeout (6 s). Before the fix the tool call came back "outcome unknown" although it had run. The
 * fault runs (server-restart.reliability.ts) do the same for 5, 15 and 60 s with two workers.
 */

const OUTAGE_MS = 15_000;

let tmp: string;
let port: number;
let server: DevServerProcess | undefined;
let connection: Connection;
let client: Client;
let model: ScriptedModel;
const workers: WorkerProcess[] = [];
const counterFiles: string[] = [];

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-outage-'));
  port = await findFreePort();
  server = await DevServerProcess.start({ port, dbFile: path.join(tmp, 'temporal.sqlite'), logFile: serverLog() });
  connection = await Connection.connect({ address: `127.0.0.1:${port}` });
  client = new Client({ connection });
  model = await startScriptedModel({ script: outageScript, name: 'the outage run' });
});

afterAll(async () => {
  await Promise.allSettled(workers.map((worker) => worker.kill()));
  await connection?.close();
  await server?.kill();
  killLeftovers(counterFiles);
  await model?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

function serverLog(): string {
  return path.join(tmp, 'server.log');
}

describe('a Temporal outage longer than the worker retries a completion', () => {
  it('down 15 s while a model call and a side-effecting tool call finish: both results reach the workflow, nothing runs twice', async () => {
    const run = await runOutage(
      {
        temporalAddress: `127.0.0.1:${port}`,
        client,
        model,
        tmp,
        killServer: async () => {
          await server!.kill();
          server = undefined;
        },
        startServer: async () => {
          server = await DevServerProcess.start({
            port,
            dbFile: path.join(tmp, 'temporal.sqlite'),
            logFile: serverLog(),
          });
        },
        workers,
        counterFiles,
      },
      { outageMs: OUTAGE_MS, workerCount: 1 },
    );
    expectNothingLost(run);
  }, 150_000);
});
