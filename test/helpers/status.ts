import { setTimeout as sleep } from 'node:timers/promises';
import { isGrpcDeadlineError, type WorkflowHandle } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import type { DurableAgentClient } from '../../src/client/index.js';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { type ConversationStatus, statusQuery } from '../../src/workflows/definitions.js';

/** How long one query may take before it is asked again (real time). */
const QUERY_DEADLINE_MS = 10_000;
const QUERY_ATTEMPTS = 3;

/**
 * Ask a query, again when no answer came in 10 s. A worker without a workflow cache (`maxCachedWorkflows: 0`, as the
 * tests that replay every task use) can drop a query task that arrives while it evicts the run ("There were leftover
 * buffered tasks when evicting run", sdk-core); the time-skipping test server then never answers that query, so
 * without a deadline the test hangs until its timeout. A query changes nothing, so asking again is safe.
 */
export async function queryOf<Ret, Args extends unknown[]>(
  handle: WorkflowHandle,
  query: QueryDefinition<Ret, Args>,
  ...args: Args
): Promise<Ret> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await handle.client.connection.withDeadline(Date.now() + QUERY_DEADLINE_MS, () =>
        handle.query(query, ...args),
      );
    } catch (error) {
      if (!isGrpcDeadlineError(error) || attempt >= QUERY_ATTEMPTS) throw error;
      console.warn(`query ${query.name} of ${handle.workflowId}: no answer in ${QUERY_DEADLINE_MS} ms, asking again`);
    }
  }
}

/**
 * Poll the status query every 100 ms until `done` holds, at most `attempts` times (real time: no timer is involved, so
 * the time-skipping server does not skip while this waits).
 */
export async function waitForStatus(
  handle: WorkflowHandle<typeof conversationWorkflow>,
  done: (status: ConversationStatus) => boolean,
  attempts = 200,
): Promise<ConversationStatus> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const status = await queryOf(handle, statusQuery);
    if (done(status)) return status;
    await sleep(100);
  }
  throw new Error(`status never matched; last: ${JSON.stringify(await queryOf(handle, statusQuery))}`);
}

/**
 * Polls a conversation's status through the client until `ready` gives something (real time: a test that waits on a
 * query does not skip time); throws with the last status after 30 s.
 */
export async function clientStatusWhen<T>(
  client: DurableAgentClient,
  id: string,
  ready: (status: Awaited<ReturnType<DurableAgentClient['status']>>) => T,
): Promise<NonNullable<T>> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const found = ready(await client.status(id));
    if (found) return found;
    await sleep(100);
  }
  throw new Error(`conversation ${id} never got there: ${JSON.stringify(await client.status(id))}`);
}
