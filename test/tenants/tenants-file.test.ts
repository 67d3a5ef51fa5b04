import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/index.js';
import { loadTenants, parseTenants, tenantPriority } from '../../src/config/tenants.js';
import { readWorkerConcurrency } from '../../src/config/worker-concurrency.js';
import { ExitCode } from '../../src/shared/exit-codes.js';
import { killAll, runCli } from '../cli/helpers.js';

let directory: string;

beforeAll(async () => {
  directory = await fs.mkdtemp(path.join(os.tmpdir(), 'durable-agent-tenants-'));
});

afterAll(async () => {
  await killAll();
  await fs.rm(directory, { recursive: true, force: true });
});

async function file(name: string, content: string): Promise<string> {
  const where = path.join(directory, name);
  await fs.writeFile(where, content);
  return where;
}

describe('the tenants file (DURABLE_AGENT_TENANTS)', () => {
  it('tenants file: weights, daily budgets and what a budget does are read per tenant', async () => {
    const tenants = loadTenants(
      await file('good.json', '{"acme": {"weight": 3, "dailyCostUsd": 50, "onDailyCostLimit": "pause"}, "b": {}}'),
    );
    expect(tenants).toEqual({ acme: { weight: 3, dailyCostUsd: 50, onDailyCostLimit: 'pause' }, b: {} });
    expect(tenantPriority('acme', tenants)).toEqual({ fairnessKey: 'acme', fairnessWeight: 3 });
    expect(tenantPriority('other', tenants)).toEqual({ fairnessKey: 'other' });
  });

  it.each([
    [
      'an unknown key',
      { acme: { weigth: 2 } },
      /tenant "acme": unknown key "weigth"; the keys are weight, dailyCostUsd/,
    ],
    [
      'a negative weight',
      { acme: { weight: -1 } },
      /tenant "acme": "weight" is -1; expected a number from 0.001 to 1000/,
    ],
    ['a negative budget', { acme: { dailyCostUsd: -5 } }, /tenant "acme": "dailyCostUsd" is -5; expected a number/],
    ['an unknown budget action', { acme: { onDailyCostLimit: 'ask' } }, /"onDailyCostLimit" is "ask"; expected "fail"/],
    ['a tenant id over 64 bytes', { ['t'.repeat(65)]: {} }, /it has 65 bytes, more than 64/],
    ['not an object', [], /expected a JSON object from tenant id to its policy/],
  ])('tenants file: %s is a ConfigError naming the file, the key and what is expected', (_what, value, message) => {
    expect(() => parseTenants(value, 'DURABLE_AGENT_TENANTS file tenants.json')).toThrow(ConfigError);
    expect(() => parseTenants(value, 'DURABLE_AGENT_TENANTS file tenants.json')).toThrow(message);
    expect(() => parseTenants(value, 'DURABLE_AGENT_TENANTS file tenants.json')).toThrow(/tenants\.json/);
  });

  it('tenants file: a bad one stops a command at start with exit 2, naming the file and the key', async () => {
    const bad = await file('bad.json', '{"acme": {"weight": -2}}');
    const run = await runCli(['list'], { ...process.env, DURABLE_AGENT_TENANTS: bad });
    expect(run.code).toBe(ExitCode.Usage);
    expect(run.stderr).toContain(bad);
    expect(run.stderr).toContain('tenant "acme": "weight" is -2');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('worker concurrency: the three limits are read, a bad one names its variable', () => {
    expect(
      readWorkerConcurrency({
        DURABLE_AGENT_MAX_CONCURRENT_MODEL_CALLS: '4',
        DURABLE_AGENT_MAX_CONCURRENT_TOOL_CALLS: '8',
        DURABLE_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS: '2',
      }),
    ).toEqual({ modelCalls: 4, toolCalls: 8, workflowTasks: 2 });
    expect(readWorkerConcurrency({})).toEqual({});
    expect(() => readWorkerConcurrency({ DURABLE_AGENT_MAX_CONCURRENT_MODEL_CALLS: '0' })).toThrow(
      /DURABLE_AGENT_MAX_CONCURRENT_MODEL_CALLS="0": expected a whole number from 1/,
    );
  });
});
