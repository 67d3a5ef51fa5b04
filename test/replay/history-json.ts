import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';

/** test/fixtures/histories: the first recorded histories (before the per-release corpus), replayed by replay.test.ts. */
export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/** `plain-turn.json` → `conversation-replay-plain-turn`; `continue-as-new.run-2.json` → `conversation-replay-continue-as-new`. */
export function fixtureWorkflowId(file: string): string {
  return `conversation-replay-${path.basename(file).replace(/(\.run-\d+)?\.json$/, '')}`;
}

/**
 * Every fixture, as the replayer takes them: the files of `directory` and of its subdirectories (an older set kept
 * beside a newer recording, e.g. `before-streaming/`), named by their path relative to `directory`.
 */
export function loadFixtures(directory = FIXTURES_DIR): (HistoryAndWorkflowId & { file: string })[] {
  return (readdirSync(directory, { recursive: true }) as string[])
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({
      file,
      workflowId: fixtureWorkflowId(file),
      history: historyFromJSON(JSON.parse(readFileSync(path.join(directory, file), 'utf8'))),
    }));
}
