import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HistoryAndWorkflowId } from '@temporalio/client';
import proto, { type temporal } from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root.js';

type History = temporal.api.history.v1.IHistory;

/** test/fixtures/histories: written by scripts/record-histories.mjs, replayed by replay.test.ts. */
export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/**
 * `historyFromJSON` of @temporalio/common, with the protobufjs copy that @temporalio/proto's types come from. The lock
 * file installs protobufjs 8 three times (nested under proto, common and worker, because 7.x sits at the top for grpc),
 * so the SDK's own helper fails its `instanceof Type` check with "type must be a Type".
 */
export function historyFromJson(json: unknown): History {
  const protoRequire = createRequire(createRequire(import.meta.url).resolve('@temporalio/proto'));
  const { fromJson } = protoRequire('protobufjs/ext/protojson') as {
    fromJson: (type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }) => History | null;
  };
  const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType(
    'temporal.api.history.v1.History',
  );
  const history = fromJson(historyType, json, { ignoreUnknownFields: true });
  if (history === null) throw new TypeError('not a history');
  return history;
}

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
      history: historyFromJson(JSON.parse(readFileSync(path.join(directory, file), 'utf8'))),
    }));
}
