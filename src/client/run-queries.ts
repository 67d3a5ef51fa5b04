import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import { isResourceExhausted, isUnavailable } from './grpc-retry.js';
import type { ConversationHandle, ConversationRuns } from './conversation-runs.js';

/**
 * How long a query may wait before the client starts looking whether its run closed under it. A query to a run between
 * workflow tasks is answered in milliseconds; one that waits for a workflow task may be answered by a run that closes.
 */
export const CLOSING_LOOK_AFTER_MS = 500;
/**
 * A query answered after this long may have waited for a worker, which answers a run that closed meanwhile from its
 * history: the run is looked at once before the answer is taken as the running run's. Queries to a run between
 * workflow tasks answer in milliseconds and skip the look.
 */
const LOOK_AFTER_SLOW_ANSWER_MS = 100;
/** Pause between two looks at a run whose query still waits. */
const CLOSING_LOOK_EVERY_MS = 500;
/** How long a query Temporal refuses while another one waits for the run is sent again: the server's query timeout. */
const BUSY_WAIT_MS = 30_000;
/** Longest pause before a refused query is sent again. */
const MAX_BUSY_PAUSE_MS = 1_000;

/**
 * Query a conversation's run that was running when it was last described, and get an answer that the run closing
 * under the query cannot turn into a Temporal error. Two windows make a plain query fail while nothing is wrong:
 *
 * - While a workflow task of the run is due, Temporal holds one query until the task completes and refuses any other
 *   at once ("consistent query buffer is full", RESOURCE_EXHAUSTED), and drops the one it holds when it drops its copy
 *   of the workflow ("buffered query cleared, please retry", UNAVAILABLE): the query is sent again, for up to 30 s.
 * - A query that waits for the run's last workflow task, or reaches the worker as the run completes, is never answered
 *   (the worker drops it with the run); the caller would wait for the server's query timeout (30 s) and get "query
 *   timed out". Once the query has waited a moment, the run is looked at; when it has closed, the query is given up
 *   and `whenClosed` answers instead (a read of the closed run: its outcome, or the same query, which a closed run
 *   answers from its history).
 *
 * @internal
 */
export async function queryRun<T>(
  runs: ConversationRuns,
  conversationId: string,
  runId: string,
  query: (handle: ConversationHandle) => Promise<T>,
  whenClosed: () => Promise<T>,
): Promise<T> {
  const busyUntil = Date.now() + BUSY_WAIT_MS;
  for (let attempt = 1; ; attempt++) {
    const controller = new AbortController();
    const signal = withCallerSignal(runs, controller.signal);
    const sentAt = Date.now();
    const answer = runs.client.withAbortSignal(signal, () => query(runs.handle(conversationId, runId)));
    let first: { value: T } | 'closed';
    try {
      first = await Promise.race([
        answer.then((value) => ({ value })),
        closedUnder(runs, conversationId, runId, controller.signal),
      ]);
      // An answer that waited for a workflow task may come from a run that closed meanwhile.
      const waited = Date.now() - sentAt >= LOOK_AFTER_SLOW_ANSWER_MS;
      if (first !== 'closed' && waited && (await isClosed(runs, conversationId, runId))) first = 'closed';
    } catch (error) {
      const refused = isResourceExhausted(error) || isUnavailable(error);
      if (!refused || Date.now() >= busyUntil || signal.aborted) throw error;
      await sleep(Math.min(100 * 1.5 ** (attempt - 1), MAX_BUSY_PAUSE_MS), undefined, { signal });
      continue;
    } finally {
      controller.abort();
      answer.catch(() => undefined);
    }
    return first === 'closed' ? await whenClosed() : first.value;
  }
}

/** Settles with `'closed'` once the run is seen closed, looking after a moment; never settles once `stop` aborts. */
async function closedUnder(
  runs: ConversationRuns,
  conversationId: string,
  runId: string,
  stop: AbortSignal,
): Promise<'closed'> {
  try {
    await sleep(CLOSING_LOOK_AFTER_MS, undefined, { signal: stop });
    while (!(await isClosed(runs, conversationId, runId))) {
      await sleep(CLOSING_LOOK_EVERY_MS, undefined, { signal: stop });
    }
    return 'closed';
  } catch {
    // Stopped, or the look failed: the query's own outcome decides.
    return await new Promise<never>(() => undefined);
  }
}

async function isClosed(runs: ConversationRuns, conversationId: string, runId: string): Promise<boolean> {
  const description = await runs.handle(conversationId, runId).describe();
  return description.status.name !== 'RUNNING';
}

/**
 * `own`, aborted also by the signal of the caller's `withAbortSignal` scope, if any: the connection keeps one signal
 * per call scope, so a scope of our own would otherwise hide the caller's.
 */
function withCallerSignal(runs: ConversationRuns, own: AbortSignal): AbortSignal {
  const storage = (runs.client.connection as Partial<Pick<Connection, 'callContextStorage'>>).callContextStorage;
  const caller = storage?.getStore()?.abortSignal;
  return caller === undefined ? own : AbortSignal.any([caller, own]);
}
