import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { startTestAgent } from '../../src/testing/agent.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { until } from '../reliability/helpers.js';
import { killAll, runCli } from './helpers.js';

let env: TestWorkflowEnvironment;
let cliEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  env = await createLocalEnvironment();
  cliEnv = { ...process.env, TEMPORAL_ADDRESS: env.address };
  for (const name of Object.keys(cliEnv)) if (name.startsWith('DURABLE_AGENT_')) delete cliEnv[name];
});

afterAll(async () => {
  await killAll();
  await env?.teardown();
});

describe('durable-agent deployments', () => {
  it('deployments: without any versioned worker it says so, and --name of a missing deployment exits 3', async () => {
    const none = await runCli(['deployments'], cliEnv);
    expect(none.code).toBe(0);
    expect(none.stdout).toMatch(/^No Worker Deployments: no worker has run with Worker Versioning on/);

    const missing = await runCli(['deployments', '--name', 'missing'], cliEnv);
    expect(missing.code).toBe(ExitCode.NotFound);
    expect(missing.stderr).toMatch(/No Worker Deployment named missing in namespace default/);
  });

  it('deployments: a version that never became current can be shut down; made current, it cannot', async () => {
    const deploymentName = 'cli-deployments';
    await using _agent = await startTestAgent({
      env,
      workerOptions: { deploymentVersion: { deploymentName, buildId: '1.0.0+abc' } },
    });
    const version = async () => {
      const run = await runCli(['deployments', '--name', deploymentName, '--json'], cliEnv);
      expect(run.code, run.stderr).toBe(0);
      return (JSON.parse(run.stdout) as { versions: Record<string, unknown>[] }[])[0]?.versions[0];
    };
    // The deployment exists once the worker's first poll reaches the server.
    const registered = await until(() => version().catch(() => undefined), 'the version to register', {
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    expect(registered).toMatchObject({ buildId: '1.0.0+abc', openPinnedConversations: 0, canShutDown: true });

    await env.client.workflowService.setWorkerDeploymentCurrentVersion({
      namespace: 'default',
      deploymentName,
      buildId: '1.0.0+abc',
      identity: 'test',
    });
    expect(await version()).toMatchObject({ buildId: '1.0.0+abc', status: 'current', canShutDown: false });
    const table = await runCli(['deployments'], cliEnv);
    expect(table.stdout).toContain(`Worker Deployment ${deploymentName}`);
    expect(table.stdout).toMatch(/1\.0\.0\+abc\s+current\s+0\s+no: new conversations go to it/);
  });
});
