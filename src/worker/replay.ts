import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client, HistoryAndWorkflowId } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { encryptionDataConverter } from '../codec/data-converter.js';
import type { EncryptionKey } from '../codec/keys.js';
import { errorMessage } from '../shared/errors.js';
import { bundleWorkflows } from './agent-worker.js';

/**
 * The check before a deploy (docs/upgrading.md): replay conversations' histories on this version's workflow code. A
 * history that replays is one this version's worker can take over in place; one that does not would fail its next
 * workflow task with a nondeterminism error, so the version must not replace the old worker in place.
 */

/** The histories of a deploy's concern: open conversations on the task queue (closed ones never run again). */
export function openConversationsQuery(taskQueue: string): string {
  return `WorkflowType = 'conversationWorkflow' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue}'`;
}

export interface ReplayOutcome {
  /** The workflow id, or for a file its path. */
  workflowId: string;
  /** Unset when the history replayed; otherwise the error's name and message (a `DeterminismViolationError` …). */
  error?: { name: string; message: string };
}

/** Histories exported with `temporal workflow show --output json`, each named by its file. */
export async function historiesFromFiles(files: readonly string[]): Promise<HistoryAndWorkflowId[]> {
  return await Promise.all(
    files.map(async (file) => {
      try {
        return { workflowId: path.basename(file), history: historyFromJSON(JSON.parse(await readFile(file, 'utf8'))) };
      } catch (error) {
        throw new Error(
          `${file} is not a history file (${errorMessage(error)}): export one with ` +
            '`temporal workflow show --workflow-id conversation-<id> --output json > FILE`.',
          { cause: error },
        );
      }
    }),
  );
}

/** The histories of the workflows a visibility query finds, newest first, at most `limit` of them. */
export async function* historiesFromServer(
  client: Client,
  query: string,
  limit: number,
): AsyncIterable<HistoryAndWorkflowId> {
  let count = 0;
  for await (const entry of client.workflow.list({ query }).intoHistories()) {
    if (count++ >= limit) return;
    yield entry;
  }
}

/**
 * Replay each history on this package's workflow code, with the data converter of these keys (an encrypted history
 * needs the keys that wrote it), in one replay worker. Never throws for a history that fails: its outcome says why.
 */
export async function* replayHistories(
  histories: Iterable<HistoryAndWorkflowId> | AsyncIterable<HistoryAndWorkflowId>,
  options: { encryptionKeys?: readonly EncryptionKey[] } = {},
): AsyncIterable<ReplayOutcome> {
  quietRuntime();
  const keys = options.encryptionKeys ?? [];
  const workflowBundle = await bundleWorkflows({ encodeFailures: keys.length > 0 });
  const replays = Worker.runReplayHistories(
    { workflowBundle, dataConverter: encryptionDataConverter(keys), replayName: 'durable-agent replay' },
    histories,
  );
  for await (const result of replays) {
    yield result.error === undefined
      ? { workflowId: result.workflowId }
      : {
          workflowId: result.workflowId,
          error: { name: errorName(result.error), message: errorMessage(result.error) },
        };
  }
}

function errorName(error: unknown): string {
  return error instanceof Error ? error.name : 'Error';
}

/**
 * The replay worker's own lines (RUNNING, DRAINING, each failing task, …) would bury the report: only errors, on stderr. Where
 * a Runtime exists already (a test, an embedding process), it is kept as it is.
 */
function quietRuntime(): void {
  try {
    Runtime.install({
      logger: new DefaultLogger('ERROR', (entry) => process.stderr.write(`${entry.level} ${entry.message}\n`)),
      // sdk-core's own lines too (it warns of each failing workflow task, which the report says already).
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // Installed already: its logger stays.
  }
}
