import { isGrpcServiceError, type Client } from '@temporalio/client';
import { log } from '@temporalio/activity';
import { causeChain, errorMessage } from '../../shared/errors.js';
import { statusQuery, type ConversationOutcome } from '../../workflows/definitions.js';
import type { EarlierRun, FindEarlierRunInput } from '../../workflows/earlier-runs.js';
import { quoteQueryValue } from '../../shared/visibility-query.js';

/** Said once per process: a test server without visibility would say it for every conversation. */
let warnedUnavailable = false;

/** Runs of the workflow id looked at in visibility: the newest come first, and one is enough. */
const PAGE_SIZE = 20;
/** A chain of continue-as-new longer than this is not followed further (months of turns, at 100 turns a run). */
const MAX_HOPS = 1_000;
const GRPC_UNIMPLEMENTED = 12;

/**
 * The `findEarlierRun` activity (a local activity of the conversation workflow, see src/workflows/earlier-runs.ts):
 * the latest run of a workflow id before the asking one. Visibility only tells which runs exist (a run is listed
 * moments after it starts); whether and how each closed is read from the run itself, which is always current, and a
 * chain of continue-as-new is followed in the histories to its last run.
 */
export function createEarlierRunActivities(client: Client) {
  return {
    async findEarlierRun({ workflowId, runId }: FindEarlierRunInput): Promise<EarlierRun> {
      let newest: { runId: string; startTime: Date } | undefined;
      try {
        let looked = 0;
        for await (const execution of client.workflow.list({
          query: `WorkflowId = ${quoteQueryValue(workflowId)}`,
          pageSize: PAGE_SIZE,
        })) {
          if (execution.runId !== runId && (!newest || execution.startTime > newest.startTime)) {
            newest = { runId: execution.runId, startTime: execution.startTime };
          }
          if (++looked >= PAGE_SIZE) break;
        }
      } catch (error) {
        if (!isUnimplemented(error)) throw error;
        const unavailable = `this Temporal server has no visibility (${errorMessage(error)})`;
        if (!warnedUnavailable) {
          warnedUnavailable = true;
          log.warn(`Runs started over closed ones of the same conversation are not recognised: ${unavailable}.`);
        }
        return { found: false, unavailable };
      }
      if (!newest) return { found: false };
      let current = newest.runId;
      for (let hop = 0; hop < MAX_HOPS; hop++) {
        const handle = client.workflow.getHandle(workflowId, current, { followRuns: false });
        const status = (await handle.describe()).status.name;
        if (status === 'CONTINUED_AS_NEW') {
          current = await nextRunOf(client, workflowId, current);
          continue;
        }
        // Only the asking run runs now; another one listed as running has just closed, or was never ours.
        if (status === 'RUNNING' || status === 'UNKNOWN') return { found: false };
        if (status === 'COMPLETED')
          return { found: true, runId: current, status, outcome: (await handle.result()) as ConversationOutcome };
        const reported = await handle.query(statusQuery).catch(() => undefined);
        return {
          found: true,
          runId: current,
          status,
          ...(reported
            ? {
                turns: reported.turns,
                transcriptLength: reported.transcriptLength,
                ...(reported.lastResult ? { lastResult: reported.lastResult } : {}),
              }
            : {}),
        };
      }
      throw new Error(`${workflowId}: more than ${MAX_HOPS} runs continued as new after run ${newest.runId}.`);
    },
  };
}

/** The run a run continued as, from the last event of its history. */
async function nextRunOf(client: Client, workflowId: string, runId: string): Promise<string> {
  const response = await client.workflowService.getWorkflowExecutionHistoryReverse({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: 1,
  });
  const next = response.history?.events?.[0]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
  if (!next) throw new Error(`${workflowId}: run ${runId} continued as new, but its last event names no next run.`);
  return next;
}

function isUnimplemented(error: unknown): boolean {
  return [...causeChain(error)].some((cause) => isGrpcServiceError(cause) && Number(cause.code) === GRPC_UNIMPLEMENTED);
}
