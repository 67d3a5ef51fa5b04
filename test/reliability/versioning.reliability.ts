import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { resolveDevServer } from '../../src/temporal-servers/index.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { requireBuild, ResultRows } from './helpers.js';
import { DRAINAGE_DYNAMIC_CONFIG, runVersioningScenario } from './versioning-run.js';

/** Worker Versioning's fault run (./versioning-run.ts) on the dev server. */

let env: TestWorkflowEnvironment;
let tmp: string;
const rows = new ResultRows('versioning');

beforeAll(async () => {
  requireBuild();
  tmp = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-versioning-'));
  env = await createLocalEnvironment({
    extraArgs: Object.entries(DRAINAGE_DYNAMIC_CONFIG).flatMap(([key, value]) => [
      '--dynamic-config-value',
      `${key}=${JSON.stringify(value)}`,
    ]),
  });
});

afterAll(async () => {
  rows.write();
  await env?.teardown();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('Worker Versioning: a new, incompatible version becomes current', () => {
  it('turns in flight and approvals finish on the old version, next turns run on the new one, the old one drains', async () => {
    const server = await resolveDevServer(loadConfig());
    if (server.kind !== 'path') throw new Error('the fault run needs the provisioned temporal CLI');
    rows.add(await runVersioningScenario({ env, temporalCli: server.path, tmp, name: 'versioning-fault-run' }));
  });
});
