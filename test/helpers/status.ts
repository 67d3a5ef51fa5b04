import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import type { conversationWorkflow } from '../../src/workflows/conversation.js';
import { type ConversationStatus, statusQuery } from '../../src/workflows/definitions.js';

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
    const status = await handle.query(statusQuery);
    if (done(status)) return status;
    await sleep(100);
  }
  throw new Error(`status never matched; last: ${JSON.stringify(await handle.query(statusQuery))}`);
}
