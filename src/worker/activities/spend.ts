import { Context } from '@temporalio/activity';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  type Client,
  type SignalDefinition,
  type Workflow,
} from '@temporalio/client';
import type { TenantsConfig } from '../../config/tenants.js';
import { formatCost } from '../../shared/dollars.js';
import { expectedFailure, FailureType } from '../../shared/errors.js';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../../shared/search-attributes.js';
import {
  SPEND_LEDGER_WORKFLOW_TYPE,
  spendLedgerWorkflowId,
  type RecordSpendInput,
  type SpendEntry,
  type SpendTotals,
} from '../../shared/spend.js';
import type { DailyCostCheck } from '../../shared/types.js';
import { raiseDailyLimitSignal, spendSignal, spendTotalsQuery } from '../../workflows/spend-ledger.js';
import type { DailyCostLimitDetails } from '../../workflows/budget-pause.js';

/** What `recordSpend` did: `closed` when the day's ledger had closed (its grace period over) and took nothing. */
export interface RecordSpendResult {
  recorded: boolean;
  ledger: string;
}

/**
 * The activity that adds one model call to its tenant's ledger of the day (docs/tenants.md): signal-with-start of the
 * ledger workflow, on the task queue of the calling conversation, under the tenant's fairness key. Sent again on a
 * retry; the ledger counts a call once (`applySpend`).
 */
export function createSpendActivities(temporal: Client) {
  return {
    recordSpend: async (input: RecordSpendInput): Promise<RecordSpendResult> => {
      const ledger = spendLedgerWorkflowId(input.tenant, input.day);
      const recorded = await signalLedger(temporal, input, spendSignal, [input.entry]);
      return { recorded, ledger };
    },
  };
}

/**
 * Signal-with-start of a tenant's ledger of a day; false when the ledger has closed (its grace period over) and took
 * nothing.
 */
async function signalLedger(
  temporal: Client,
  { tenant, day }: { tenant: string; day: string },
  signal: SignalDefinition<[SpendEntry]> | SignalDefinition<[number]>,
  signalArgs: [SpendEntry] | [number],
): Promise<boolean> {
  const workflowId = spendLedgerWorkflowId(tenant, day);
  try {
    await temporal.workflow.signalWithStart<Workflow, unknown[]>(SPEND_LEDGER_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: Context.current().info.taskQueue,
      args: [{ tenant, day }],
      signal: signal.name,
      signalArgs,
      // A closed ledger stays closed: a new run would start from nothing and count the day again.
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      priority: { fairnessKey: tenant },
      typedSearchAttributes: [{ key: SearchAttribute.tenant, value: tenant }],
    });
    return true;
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    Context.current().log.warn('the tenant ledger of this day has closed; it takes nothing more', {
      ledger: workflowId,
    });
    return false;
  }
}

/**
 * Before a tenant's model call (docs/tenants.md, "Budgets"): when the tenants file gives the tenant a `dailyCostUsd`,
 * the ledger of the day is read (a query) and a call that would pass the limit is refused with a `DailyCostLimit`
 * failure, before any model is called; the workflow stops the turn or holds the call for a person. A tenant without a
 * daily limit costs nothing here. A raised limit (`raiseToUsd`) is recorded in the ledger first.
 */
export async function checkDailyCost(
  temporal: Client,
  tenants: TenantsConfig | undefined,
  check: DailyCostCheck | undefined,
): Promise<void> {
  const policy = check === undefined ? undefined : tenants?.[check.tenant];
  if (check === undefined || policy?.dailyCostUsd === undefined) return;
  if (check.raiseToUsd !== undefined) await signalLedger(temporal, check, raiseDailyLimitSignal, [check.raiseToUsd]);
  if (check.approved) return;
  const totals = await ledgerTotals(temporal, check);
  const limitUsd = Math.max(policy.dailyCostUsd, totals?.raisedLimitUsd ?? 0);
  const spentUsd = totals?.usd ?? 0;
  if (spentUsd < limitUsd && spentUsd + check.leastUsd <= limitUsd) return;
  const details: DailyCostLimitDetails = {
    tenant: check.tenant,
    day: check.day,
    limitUsd,
    spentUsd,
    nextCallUsd: check.leastUsd,
    onLimit: policy.onDailyCostLimit ?? 'fail',
  };
  throw expectedFailure({
    type: FailureType.DailyCostLimit,
    nonRetryable: true,
    message:
      `Tenant ${check.tenant} has spent ${formatCost({ usd: spentUsd })} of its daily cost limit of ` +
      `${formatCost({ usd: limitUsd })} on ${check.day} ` +
      '(dailyCostUsd in the tenants file), so the model call was not made. ' +
      (details.onLimit === 'pause'
        ? 'It waits for a person: durable-agent approvals lists it (docs/tenants.md).'
        : 'Raise the limit in the tenants file, or set "onDailyCostLimit": "pause" to have a person decide ' +
          '(docs/tenants.md).'),
    details: [details],
  });
}

async function ledgerTotals(temporal: Client, { tenant, day }: DailyCostCheck): Promise<SpendTotals | undefined> {
  try {
    return await temporal.workflow.getHandle(spendLedgerWorkflowId(tenant, day)).query(spendTotalsQuery);
  } catch (error) {
    // No ledger yet: nothing spent that day.
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
}
