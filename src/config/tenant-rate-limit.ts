/**
 * The operator's rate limit per tenant (docs/tenants.md): Temporal's fairness-key rate limit on the worker's activity
 * task queue, so each tenant's model and tool calls are dispatched at most so many per second, times its weight.
 */

import { ConfigError } from '../shared/errors.js';

export const TENANT_CALLS_PER_SECOND_VARIABLE = 'DURABLE_AGENT_TENANT_CALLS_PER_SECOND';

/**
 * Temporal keeps the limit as a 32-bit float; beyond this it would not limit anything a worker can take. Zero, which
 * Temporal takes as "dispatch nothing", is refused: it would stop every tenant's calls.
 */
export const MAX_TENANT_CALLS_PER_SECOND = 1_000_000;

const EXPECTED =
  `a number of calls per second above 0 and at most ${MAX_TENANT_CALLS_PER_SECOND}, such as 2 or 0.5 ` +
  "(each tenant's model and tool calls together, times its weight; unset for no limit)";

/** `DURABLE_AGENT_TENANT_CALLS_PER_SECOND`, or none when unset; anything but a positive number is a ConfigError. */
export function readTenantCallsPerSecond(env: Record<string, string | undefined> = process.env): number | undefined {
  const value = env[TENANT_CALLS_PER_SECOND_VARIABLE]?.trim();
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0 || parsed > MAX_TENANT_CALLS_PER_SECOND) {
    throw new ConfigError(
      `Invalid ${TENANT_CALLS_PER_SECOND_VARIABLE}=${JSON.stringify(value)}: expected ${EXPECTED}.`,
    );
  }
  return parsed;
}
