// What a durable-agent user writes to replay a conversation's history exported by the Temporal CLI
// (`temporal workflow show --workflow-id <id> --output json > history.json`): Temporal's standard path, with nothing
// of durable-agent but its workflow code. test/replay/fresh-install.test.ts runs it in a fresh project that installed
// the packed package; docs/reliability.md ("Replay") shows it.
//
//   node replay-history.mjs history.json <workflow-id>
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils.js';
import { Worker } from '@temporalio/worker';

const [file, workflowId] = process.argv.slice(2);
const history = JSON.parse(await readFile(file, 'utf8'));
const require = createRequire(import.meta.url);

// The parsed JSON as it is: the worker converts it with historyFromJSON, as Temporal's replay docs show.
await Worker.runReplayHistory({ workflowsPath: require.resolve('durable-agent/workflows') }, history, workflowId);
// The SDK's converter on its own, for tools that read the events.
const events = historyFromJSON(history).events ?? [];
console.log(`replayed ${workflowId}: ${events.length} events`);
