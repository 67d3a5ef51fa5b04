import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { poll } from '../client/helpers.js';
import { killAll, runCli, startCliWorker, type RunningProcess } from '../cli/helpers.js';
import { canary, occurrences } from '../helpers/secrets.js';
import { MACHINE_CLIENT, startProtectedMcp, type ProtectedMcp } from '../helpers/protected-mcp-server.js';
import { createLocalEnvironment } from '../../src/testing/environment.js';
import { startScriptedModel, type ScriptedModel } from '../../src/testing/scripted-model/index.js';

/**
 * What the dependencies print themselves (issue 42, item 2): an authorization server that refuses the worker's client
 * and quotes the secret it was sent. The MCP SDK warns about the refusal with its own `console.warn`, which quotes the
 * server's answer; no logger of ours is on that path. The real CLI worker runs a turn that lists the refused server's
 * tools, and its stdout and stderr must carry the warning with the secret replaced.
 */

/** The client secret, written literally in the MCP configuration: only that file makes it a secret. */
const clientSecret = canary('crm-client-secret');

let env: TestWorkflowEnvironment;
let model: ScriptedModel;
let crm: ProtectedMcp;
let worker: RunningProcess;
let directory: string;
let cliEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-dependency-output-'));
  env = await createLocalEnvironment();
  model = await startScriptedModel({ script: [{ content: 'The CRM is not available today.' }] });
  crm = await startProtectedMcp({ quoteRefusedSecret: true });
  const mcpConfig = path.join(directory, 'mcp.json');
  await fs.writeFile(
    mcpConfig,
    JSON.stringify({
      mcpServers: {
        crm: {
          url: crm.mcp.url,
          oauth: { grant: 'client_credentials', clientId: MACHINE_CLIENT.clientId, clientSecret },
        },
      },
    }),
  );
  cliEnv = { ...process.env };
  for (const name of Object.keys(cliEnv)) {
    if (/^(TEMPORAL|DURABLE_AGENT|OPENAI)_/.test(name) && !/^(TEMPORAL_CLI_PATH|DURABLE_AGENT_CACHE_DIR)$/.test(name)) {
      delete cliEnv[name];
    }
  }
  Object.assign(cliEnv, {
    TEMPORAL_ADDRESS: env.address,
    DURABLE_AGENT_TASK_QUEUE: `dependency-output-${Math.random().toString(36).slice(2, 10)}`,
    DURABLE_AGENT_MCP_CONFIG: mcpConfig,
    DURABLE_AGENT_TOKEN_DIR: path.join(directory, 'tokens'),
    DURABLE_AGENT_MODEL: 'scripted-model',
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
  });
  worker = await startCliWorker(cliEnv);
}, 120_000);

afterAll(async () => {
  worker?.child.kill('SIGINT');
  await worker?.exited;
  await killAll();
  await crm?.close();
  await model?.close();
  await env?.teardown();
  if (directory) await fs.rm(directory, { recursive: true, force: true });
});

describe('what the dependencies print', () => {
  test('a secret quoted by a refusing authorization server is in no line of the worker, its warning is', async () => {
    // The authorization server really quotes the secret a refused client sends.
    const refusal = await fetch(`${crm.authorizationServer.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'machine',
        client_secret: clientSecret,
      }),
    });
    expect(await refusal.json()).toEqual({
      error: 'invalid_client',
      error_description: `client secret "${clientSecret}" is not valid`,
    });

    const run = await runCli(
      ['ask', '--conversation', canary('conversation'), '--timeout', '60', 'Ask the CRM.'],
      cliEnv,
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('The CRM is not available today.');
    // The MCP SDK's own warning about the refusal reached the worker's output, the secret in it replaced.
    await poll(
      async () => worker.output(),
      (output) => output.includes('[mcp-sdk] OAuth "invalid_client"'),
    );
    const warnings = worker
      .output()
      .split('\n')
      .filter((line) => line.includes('[mcp-sdk] OAuth "invalid_client"'));
    expect(warnings.length).toBeGreaterThan(0);
    for (const warning of warnings)
      expect(warning).toContain(String.raw`client secret \"[oauth client secret of MCP server crm]\" is not valid`);
    const leaks = [
      ...occurrences(worker.output(), clientSecret).map((excerpt) => `worker output: …${excerpt}…`),
      ...occurrences(`${run.stdout}\n${run.stderr}`, clientSecret).map((excerpt) => `ask output: …${excerpt}…`),
    ];
    expect(leaks).toEqual([]);
  });
});
