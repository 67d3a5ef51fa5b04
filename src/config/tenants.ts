import { readFileSync } from 'node:fs';
import type { Priority } from '@temporalio/common';
import { ConfigError } from '../shared/errors.js';
import { tenantProblem, TENANT_SHAPE } from '../shared/tenants.js';

/** The variable that names the operator's tenants file (docs/tenants.md). */
export const TENANTS_VARIABLE = 'DURABLE_AGENT_TENANTS';

/** Temporal clamps fairness weights to this range; a weight outside it would not mean what it says. */
export const MIN_FAIRNESS_WEIGHT = 0.001;
export const MAX_FAIRNESS_WEIGHT = 1000;

/** What the operator sets for one tenant. */
export interface TenantPolicy {
  /** Its share of the workers against other tenants with work waiting (Temporal's fairness weight); default 1. */
  weight?: number;
  /** US dollars its conversations may spend per UTC day (docs/tenants.md); default no limit. */
  dailyCostUsd?: number;
  /** What a call that would pass `dailyCostUsd` does: `fail` ends the turn, `pause` waits for a person; default `fail`. */
  onDailyCostLimit?: 'fail' | 'pause';
}

/** The tenants file: tenant id to its policy. Tenants not in it have the defaults. */
export type TenantsConfig = Readonly<Record<string, TenantPolicy>>;

const KEYS = ['weight', 'dailyCostUsd', 'onDailyCostLimit'] as const;

export const TENANTS_SHAPE =
  'a JSON object from tenant id to its policy, such as {"acme": {"weight": 3, "dailyCostUsd": 50, ' +
  `"onDailyCostLimit": "pause"}, "globex": {"weight": 1}} (keys ${KEYS.join(', ')}, each optional; a tenant id is ` +
  `${TENANT_SHAPE})`;

/** The tenants file of `DURABLE_AGENT_TENANTS`, or none when the variable is unset. */
export function readTenants(env: Record<string, string | undefined> = process.env): TenantsConfig | undefined {
  const file = env[TENANTS_VARIABLE]?.trim();
  return file ? loadTenants(file) : undefined;
}

/** A tenants file's policies; every problem is a {@link ConfigError} naming the file, the key and what is expected. */
export function loadTenants(file: string): TenantsConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read ${TENANTS_VARIABLE}=${JSON.stringify(file)} (${(error as Error).message}).`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `${TENANTS_VARIABLE} file ${file} is not JSON (${(error as Error).message}): expected ${TENANTS_SHAPE}.`,
    );
  }
  return parseTenants(parsed, `${TENANTS_VARIABLE} file ${file}`);
}

/** Checks tenant policies given as an object (a file's content, or an option); `source` names them in errors. */
export function parseTenants(value: unknown, source: string): TenantsConfig {
  if (!isPlainObject(value)) throw new ConfigError(`${source}: expected ${TENANTS_SHAPE}.`);
  const tenants: Record<string, TenantPolicy> = {};
  for (const [tenant, entry] of Object.entries(value)) {
    const problem = tenantProblem(tenant);
    if (problem !== undefined) {
      throw new ConfigError(
        `${source}: the tenant id ${JSON.stringify(tenant)} is not valid (${problem}); expected ${TENANT_SHAPE}.`,
      );
    }
    const where = `${source}, tenant ${JSON.stringify(tenant)}`;
    if (!isPlainObject(entry))
      throw new ConfigError(`${where}: expected an object such as {"weight": 2}, got ${JSON.stringify(entry)}.`);
    for (const key of Object.keys(entry)) {
      if (!(KEYS as readonly string[]).includes(key)) {
        throw new ConfigError(`${where}: unknown key "${key}"; the keys are ${KEYS.join(', ')}.`);
      }
    }
    tenants[tenant] = parsePolicy(entry, where);
  }
  return tenants;
}

function parsePolicy(entry: Record<string, unknown>, where: string): TenantPolicy {
  const { weight, dailyCostUsd, onDailyCostLimit } = entry;
  const policy: TenantPolicy = {};
  if (weight !== undefined) {
    if (typeof weight !== 'number' || !(weight >= MIN_FAIRNESS_WEIGHT && weight <= MAX_FAIRNESS_WEIGHT)) {
      throw new ConfigError(
        `${where}: "weight" is ${JSON.stringify(weight)}; expected a number from ${MIN_FAIRNESS_WEIGHT} to ` +
          `${MAX_FAIRNESS_WEIGHT} (Temporal's range of fairness weights; 1 is the default share).`,
      );
    }
    policy.weight = weight;
  }
  if (dailyCostUsd !== undefined) {
    if (typeof dailyCostUsd !== 'number' || !Number.isFinite(dailyCostUsd) || dailyCostUsd < 0) {
      throw new ConfigError(
        `${where}: "dailyCostUsd" is ${JSON.stringify(dailyCostUsd)}; expected a number of US dollars of at least 0.`,
      );
    }
    policy.dailyCostUsd = dailyCostUsd;
  }
  if (onDailyCostLimit !== undefined) {
    if (onDailyCostLimit !== 'fail' && onDailyCostLimit !== 'pause') {
      throw new ConfigError(
        `${where}: "onDailyCostLimit" is ${JSON.stringify(onDailyCostLimit)}; expected "fail" or "pause".`,
      );
    }
    policy.onDailyCostLimit = onDailyCostLimit;
  }
  return policy;
}

/**
 * The Temporal priority of a tenant's conversation: the tenant as the fairness key, with its weight from the tenants
 * file when it has one. Activities and child workflows inherit it from the workflow that starts them.
 */
export function tenantPriority(tenant: string, tenants: TenantsConfig | undefined): Priority {
  const weight = tenants?.[tenant]?.weight;
  return { fairnessKey: tenant, ...(weight === undefined ? {} : { fairnessWeight: weight }) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
