import type { Client } from '@temporalio/client';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../shared/search-attributes.js';
import { SPEND_LEDGER_WORKFLOW_TYPE, type SpendTotals } from '../shared/spend.js';
import type { spendLedgerWorkflow } from '../workflows/spend-ledger.js';
import { spendTotalsQuery } from '../workflows/spend-ledger.js';
import { quoted } from './list.js';

export interface SpendOptions {
  /** Only this tenant's days. Default every tenant's. */
  tenant?: string;
  /** Only days from this UTC day on, `YYYY-MM-DD`. Default every day the namespace keeps. */
  since?: string;
}

/** A UTC day as `YYYY-MM-DD`. */
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * What each tenant spent each UTC day (docs/tenants.md), from the tenants' ledger workflows: a running ledger answers
 * its query, a closed one its result. Sorted by day, then tenant. `DurableAgentClient.spend` is the public way in.
 * @internal
 */
export async function tenantSpend(client: Client, options: SpendOptions = {}): Promise<SpendTotals[]> {
  if (options.since !== undefined && (!DAY.test(options.since) || Number.isNaN(Date.parse(options.since)))) {
    throw new RangeError(`Invalid since ${JSON.stringify(options.since)}: expected a UTC day such as 2026-11-29.`);
  }
  const conditions = [`WorkflowType = '${SPEND_LEDGER_WORKFLOW_TYPE}'`, `ExecutionStatus != 'ContinuedAsNew'`];
  if (options.tenant !== undefined) conditions.push(`${SearchAttribute.tenant.name} = ${quoted(options.tenant)}`);
  // A day's ledger starts on that day, or later (a call recorded late): never before.
  if (options.since !== undefined) conditions.push(`StartTime >= '${options.since}T00:00:00Z'`);
  const totals: SpendTotals[] = [];
  const seen = new Set<string>();
  for await (const execution of client.workflow.list({ query: conditions.join(' AND ') })) {
    if (seen.has(execution.workflowId)) continue;
    seen.add(execution.workflowId);
    const handle = client.workflow.getHandle<typeof spendLedgerWorkflow>(execution.workflowId);
    const day =
      execution.status.name === 'RUNNING' ? await handle.query(spendTotalsQuery) : (await handle.result()).totals;
    if (options.since === undefined || day.day >= options.since) totals.push(day);
  }
  return totals.sort((a, b) => a.day.localeCompare(b.day) || a.tenant.localeCompare(b.tenant));
}
