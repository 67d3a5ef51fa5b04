import { Context } from '@temporalio/activity';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { DURABLE_AGENT_SEARCH_ATTRIBUTES as SearchAttribute } from '../../shared/search-attributes.js';
import { SPEND_LEDGER_WORKFLOW_TYPE, spendLedgerWorkflowId, type RecordSpendInput } from '../../shared/spend.js';
import { spendSignal } from '../../workflows/spend-ledger.js';

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
      const workflowId = spendLedgerWorkflowId(input.tenant, input.day);
      try {
        await temporal.workflow.signalWithStart(SPEND_LEDGER_WORKFLOW_TYPE, {
          workflowId,
          taskQueue: Context.current().info.taskQueue,
          args: [{ tenant: input.tenant, day: input.day }],
          signal: spendSignal,
          signalArgs: [input.entry],
          // A closed ledger stays closed: a new run would start from nothing and count the day again.
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          priority: { fairnessKey: input.tenant },
          typedSearchAttributes: [{ key: SearchAttribute.tenant, value: input.tenant }],
        });
        return { recorded: true, ledger: workflowId };
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        Context.current().log.warn('the tenant ledger of this day has closed; the call is not added to it', {
          ledger: workflowId,
        });
        return { recorded: false, ledger: workflowId };
      }
    },
  };
}
